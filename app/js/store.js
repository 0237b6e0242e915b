// IndexedDB behind a tiny surface, used by app/src/interop/store.rs: one database, one object store,
// one record. The page writes its whole session as one JSON string, so a save is a single put and a
// reload never reads half of one. Every function returns a promise and never throws: failures
// (IndexedDB missing or blocked, quota, private modes) reject with a short readable string.

const DB_NAME = 'flint';
const DB_VERSION = 1;
const STORE = 'session';
const KEY = 'current';

function describe(error) {
  if (typeof error === 'string') return error;
  if (error && error.name && error.message) return `${error.name}: ${error.message}`;
  return String(error?.message ?? error ?? 'unknown error');
}

// Runs `start` inside a promise so that a synchronous throw becomes a rejection.
function attempt(start) {
  return new Promise((resolve, reject) => {
    try {
      start(resolve, (error) => reject(describe(error)));
    } catch (error) {
      reject(describe(error));
    }
  });
}

export class FlintStore {
  constructor(db) {
    this.db = db;
  }

  /** The stored record (a string), or undefined when there is none. */
  load() {
    return attempt((resolve, reject) => {
      const request = this.db.transaction(STORE, 'readonly').objectStore(STORE).get(KEY);
      request.onsuccess = () => resolve(typeof request.result === 'string' ? request.result : undefined);
      request.onerror = () => reject(request.error);
    });
  }

  /** Replaces the record with `json`; resolves once it is committed. */
  save(json) {
    return attempt((resolve, reject) => {
      const tx = this.db.transaction(STORE, 'readwrite');
      tx.objectStore(STORE).put(json, KEY);
      tx.oncomplete = () => resolve();
      // A failed put aborts the transaction; `error` is null when it was aborted for another reason.
      tx.onabort = () => reject(tx.error ?? 'the write was aborted');
    });
  }
}

/** Opens (creating on first use) Flint's database. */
export function openStore() {
  return attempt((resolve, reject) => {
    const idb = globalThis.indexedDB;
    if (!idb) {
      reject('IndexedDB is not available');
      return;
    }
    const request = idb.open(DB_NAME, DB_VERSION);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => {
      const db = request.result;
      // Let a later Flint in another tab upgrade the database rather than wait on this one.
      db.onversionchange = () => db.close();
      resolve(new FlintStore(db));
    };
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject('the database is held by another tab');
  });
}
