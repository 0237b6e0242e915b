// IndexedDB behind a tiny surface, used by app/src/interop/store.rs: one database with the current
// session (one record) and the history (one record per generation, keyed by its start time). The page
// writes its whole session as one JSON string, together with its generation's history record in the
// same transaction, so a reload never reads half of one. Every function returns a promise and never throws: failures
// (IndexedDB missing or blocked, quota, private modes) reject with a short readable string.

const DB_NAME = 'flint';
const DB_VERSION = 2;
const STORE = 'session';
const KEY = 'current';
const HISTORY = 'history';

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

  /**
   * Replaces the record with `json` and, when `historyId` is a number, the history record of that
   * id with `historyJson`; resolves once both are committed.
   */
  save(json, historyId, historyJson) {
    return this.#write([STORE, HISTORY], (tx) => {
      tx.objectStore(STORE).put(json, KEY);
      if (typeof historyId === 'number') tx.objectStore(HISTORY).put(historyJson, historyId);
    });
  }

  /** Every history record (strings), in key order. */
  listHistory() {
    return attempt((resolve, reject) => {
      const request = this.db.transaction(HISTORY, 'readonly').objectStore(HISTORY).getAll();
      request.onsuccess = () => resolve(request.result.filter((r) => typeof r === 'string'));
      request.onerror = () => reject(request.error);
    });
  }

  /** Adds history records (`ids[i]` ↦ `jsons[i]`) in one transaction: an import lands whole or not at all. */
  putHistory(ids, jsons) {
    return this.#write([HISTORY], (tx) => {
      const history = tx.objectStore(HISTORY);
      ids.forEach((id, i) => history.put(jsons[i], id));
    });
  }

  /** Deletes the history record `id`. */
  deleteHistory(id) {
    return this.#write([HISTORY], (tx) => tx.objectStore(HISTORY).delete(id));
  }

  /** Deletes every history record. */
  clearHistory() {
    return this.#write([HISTORY], (tx) => tx.objectStore(HISTORY).clear());
  }

  #write(stores, body) {
    return attempt((resolve, reject) => {
      const tx = this.db.transaction(stores, 'readwrite');
      body(tx);
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
    request.onupgradeneeded = () => {
      const db = request.result;
      for (const name of [STORE, HISTORY]) {
        if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
      }
    };
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

/**
 * Asks the browser to keep Flint's storage under pressure (`navigator.storage.persist()`). Resolves
 * 'granted', 'refused' or 'unavailable' (no StorageManager: an old browser or an insecure origin).
 */
export function persistStorage() {
  const storage = globalThis.navigator?.storage;
  if (!storage?.persist) return Promise.resolve('unavailable');
  return (storage.persisted ? storage.persisted() : Promise.resolve(false))
    .then((already) => already || storage.persist())
    .then((granted) => (granted ? 'granted' : 'refused'), () => 'unavailable');
}

/** The text of the file chosen in `input` (an `<input type=file>`), or undefined when none is. */
export function readChosenFile(input, maxBytes) {
  return attempt((resolve, reject) => {
    const file = input.files?.[0];
    if (!file) {
      resolve(undefined);
      return;
    }
    if (file.size > maxBytes) {
      reject(`too large: ${file.size}`);
      return;
    }
    file.text().then(resolve, reject);
  });
}
