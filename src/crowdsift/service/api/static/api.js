// Talking to the crowdsift API: JSON requests and the API key they carry.
//
// The key lives in sessionStorage (this tab only) and goes out as a bearer token; a 401 becomes
// KeyNeeded so the page can ask for the key and retry.

const KEY_STORAGE = "crowdsift.apiKey";

export class ApiError extends Error {}
export class KeyNeeded extends ApiError {}

export function storedKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

/** Remember the key for this tab; false when the browser blocks session storage. */
export function rememberKey(key) {
  try {
    sessionStorage.setItem(KEY_STORAGE, key);
    return true;
  } catch {
    return false;
  }
}

export function forgetKey() {
  try {
    sessionStorage.removeItem(KEY_STORAGE);
  } catch { /* storage unavailable: the key just is not remembered */ }
}

export function authHeaders(extra = {}) {
  const key = storedKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

function errorMessage(body, fallback) {
  const message = body && body.error && body.error.message;
  return typeof message === "string" && message ? message : fallback;
}

export async function api(path, init = {}) {
  const headers = authHeaders(init.body ? { "Content-Type": "application/json" } : {});
  let response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch {
    throw new ApiError("cannot reach the crowdsift server; check that it is still running");
  }
  const body = await response.json().catch(() => null);
  if (response.status === 401) throw new KeyNeeded(errorMessage(body, "an API key is needed"));
  if (!response.ok) {
    throw new ApiError(errorMessage(body, `the server answered HTTP ${response.status}`));
  }
  return body;
}

export function jobPath(id) {
  return `/api/research/${encodeURIComponent(id)}`;
}
