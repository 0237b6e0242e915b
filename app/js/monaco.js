// Monaco's AMD build, loaded on demand (editor.js and diff.js share it).
//
// It is not on the page at first: index.html names its folder in `<meta name="flint-monaco">`, and
// the first caller adds its loader, so the prompt is usable before 1 MB of editor script runs.

let monacoLoading = null;

/** Where index.html put Monaco's AMD build (`/vs-<version>`, kept by browsers for a year). */
function monacoBase() {
  return document.querySelector('meta[name="flint-monaco"]')?.content ?? '/vs';
}

/** Adds Monaco's AMD loader to the page (once) and asks it for the editor. */
export function loadMonaco() {
  if (!monacoLoading) {
    monacoLoading = new Promise((resolve, reject) => {
      const base = monacoBase();
      const start = () => {
        const amdRequire = globalThis.require;
        if (typeof amdRequire !== 'function' || typeof amdRequire.config !== 'function') {
          reject(new Error(`Monaco's loader (${base}/loader.js) did not define require`));
          return;
        }
        amdRequire.config({ paths: { vs: base } });
        amdRequire(['vs/editor/editor.main'], () => resolve(globalThis.monaco), reject);
      };
      const script = document.createElement('script');
      script.src = `${base}/loader.js`;
      script.onload = start;
      script.onerror = () => reject(new Error(`Monaco's loader (${script.src}) did not load`));
      document.head.appendChild(script);
    });
  }
  return monacoLoading;
}
