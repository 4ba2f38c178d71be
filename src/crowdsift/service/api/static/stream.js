// Following a research job: its Server-Sent Events stream, or polling when the stream breaks.
//
// The stream is read with fetch() rather than EventSource because EventSource cannot send the
// Authorization header an API-key server needs.

import { api, ApiError, authHeaders, jobPath, KeyNeeded } from "./api.js";

const POLL_MS = 1500;
const STREAM_ATTEMPTS = 3;

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Stream the job's events until ``done``; if the stream keeps breaking, poll instead.
 * ``onProgress(event)`` gets each progress event once (a reconnect resumes after the last one
 * seen); ``onStatus(status)`` gets each status change. Resolves with the finished job.
 */
export async function follow(id, { onProgress, onStatus }) {
  const seen = { lastSeq: 0 };
  const dispatch = (type, data, eventId) =>
    onServerEvent(type, data, eventId, seen, onProgress, onStatus);
  for (let attempt = 0; attempt < STREAM_ATTEMPTS; attempt += 1) {
    if (attempt) await sleep(500 * attempt);
    try {
      if (await streamEvents(`${jobPath(id)}/events`, seen.lastSeq, dispatch)) {
        return await api(jobPath(id));
      }
    } catch (err) {
      if (err instanceof KeyNeeded) throw err;
    }
  }
  onProgress({ phase: "page", message: "live progress unavailable; checking the job instead" });
  for (;;) {
    const job = await api(jobPath(id));
    onStatus(job.status);
    if (job.status === "done" || job.status === "failed") return job;
    await sleep(POLL_MS);
  }
}

/** Read Server-Sent Events from a fetch() body; true once the ``done`` event arrived. */
async function streamEvents(path, lastSeq, dispatch) {
  const headers = authHeaders({ Accept: "text/event-stream" });
  if (lastSeq) headers["Last-Event-ID"] = String(lastSeq);
  const response = await fetch(path, { headers, cache: "no-store" });
  if (response.status === 401) throw new KeyNeeded("an API key is needed");
  if (!response.ok || !response.body) throw new ApiError(`event stream: HTTP ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = sseParser(dispatch);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return parser.finished();
    if (parser.push(value)) {
      await reader.cancel();
      return true;
    }
  }
}

/** An incremental parser of the SSE wire format; ``push`` is true once ``done`` was seen. */
function sseParser(dispatch) {
  let buffer = "";
  let event = { type: "message", data: [], id: null };
  let finished = false;
  const line = (text) => {
    if (text === "") {
      if (event.data.length) finished = dispatch(event.type, event.data.join("\n"), event.id)
        || finished;
      event = { type: "message", data: [], id: null };
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event.type = value;
    else if (field === "data") event.data.push(value);
    else if (field === "id") event.id = value;
  };
  return {
    push(chunk) {
      buffer += chunk;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      lines.forEach(line);
      return finished;
    },
    finished: () => finished,
  };
}

/** Hand one server event to the page; true for ``done``. */
function onServerEvent(type, data, id, seen, onProgress, onStatus) {
  let payload;
  try {
    payload = JSON.parse(data);
  } catch {
    return false;
  }
  if (type === "progress") {
    const seq = Number(payload.seq ?? id);
    if (seq && seq <= seen.lastSeq) return false;
    if (seq) seen.lastSeq = seq;
    onProgress(payload);
  } else if (type === "status") {
    onStatus(payload.status);
  } else if (type === "done") {
    onStatus(payload.status);
    return true;
  }
  return false;
}
