// crowdsift web page: ask a question, follow the job's progress, show the sourced answers.
//
// The entry module (loaded as <script type="module">): it wires the forms to the API. Requests
// and the API key live in api.js, the job's event stream in stream.js, rendering in render.js,
// and every DOM node is built by the escaping-safe helpers of dom.js (never innerHTML).

import { api, forgetKey, KeyNeeded, rememberKey, storedKey } from "./api.js";
import { $, show } from "./dom.js";
import { addProgress, jobStatus, renderExpertPicker, renderJob, startView } from "./render.js";
import { follow } from "./stream.js";

const state = { experts: new Map(), running: false, retry: null };

// ---- API key ------------------------------------------------------------------------------

function askForKey(retry) {
  const refused = storedKey() !== null;
  forgetKey();
  state.retry = retry;
  $("auth-message").textContent = refused
    ? "The server refused that API key. Enter the key set in CROWDSIFT_API_KEY."
    : "This server asks for an API key (CROWDSIFT_API_KEY). It is kept for this tab only.";
  show($("auth"), true);
  $("api-key").focus();
}

function onKeySubmit(event) {
  event.preventDefault();
  const key = $("api-key").value.trim();
  if (!key) return;
  if (!rememberKey(key)) {
    $("auth-message").textContent = "This browser blocks session storage; the key cannot be kept.";
    return;
  }
  $("api-key").value = "";
  show($("auth"), false);
  const retry = state.retry;
  state.retry = null;
  if (retry) retry();
}

// ---- Experts picker -------------------------------------------------------------------------

async function loadExperts() {
  const status = $("experts-status");
  status.textContent = "Loading experts…";
  let experts;
  try {
    experts = await api("/api/experts");
  } catch (err) {
    if (err instanceof KeyNeeded) {
      status.textContent = "Enter the API key above to see the experts.";
      askForKey(loadExperts);
    } else {
      status.textContent = `Could not load the experts: ${err.message}`;
    }
    return;
  }
  const list = Array.isArray(experts) ? experts : [];
  state.experts = new Map(list.map((e) => [String(e.expert_id), e]));
  renderExpertPicker(list);
}

function expertName(id) {
  const expert = state.experts.get(id);
  return String((expert && expert.name) || id);
}

// ---- Asking and following a job -------------------------------------------------------------

function readForm() {
  return {
    question: $("question").value.trim(),
    experts: [...document.querySelectorAll("#expert-list input:checked")].map((i) => i.value),
    search_reddit: $("search-reddit").checked,
    sources: [...document.querySelectorAll('#ask-form input[name="source"]:checked')]
      .map((i) => i.value),
    use_recent_only: $("recent-only").checked,
    engine: null,
  };
}

function problemWith(request) {
  if (request.question.length < 3) return "Write a question (at least 3 characters).";
  if (!request.search_reddit && request.experts.length === 0 && request.sources.length === 0) {
    return "Pick at least one expert, or tick “Search Reddit”, “YouTube” or “Amazon”.";
  }
  return null;
}

function formError(message) {
  $("form-error").textContent = message || "";
  show($("form-error"), Boolean(message));
}

function setRunning(running) {
  state.running = running;
  const button = $("submit");
  button.disabled = running;
  button.textContent = running ? "Working…" : "Ask";
  $("ask-form").setAttribute("aria-busy", String(running));
}

async function onAsk(event) {
  event.preventDefault();
  if (state.running) return;
  formError(null);
  const request = readForm();
  const problem = problemWith(request);
  if (problem) {
    formError(problem);
    return;
  }
  setRunning(true);
  try {
    const accepted = await api("/api/research", { method: "POST", body: JSON.stringify(request) });
    startView(request, expertName);
    const job = await follow(String(accepted.id), { onProgress: addProgress, onStatus: jobStatus });
    renderJob(job, expertName);
  } catch (err) {
    if (err instanceof KeyNeeded) askForKey(() => $("ask-form").requestSubmit());
    else formError(err.message);
  } finally {
    setRunning(false);
  }
}

// ---- Start ----------------------------------------------------------------------------------

$("ask-form").addEventListener("submit", onAsk);
$("auth-form").addEventListener("submit", onKeySubmit);
loadExperts();
