// Links to a finished answer's reports, GET /api/research/{id}/report.md and .html: the files
// `crowdsift ask --format md|html` writes. Without an API key they are plain links (the HTML
// report opens in a new tab). With one, a link cannot send the key, so a click fetches the
// report with it and saves the file under the name the server gives.

import { authHeaders, jobPath, storedKey } from "./api.js";
import { el } from "./dom.js";

const FORMATS = [["md", "Markdown"], ["html", "HTML"]];

export function reportLinks(jobId) {
  const links = FORMATS.map(([ext, label]) => {
    const href = `${jobPath(jobId)}/report.${ext}`;
    const link = el("a", {
      href, target: "_blank", rel: "noopener noreferrer", className: `report report-${ext}`,
      "aria-label": `this answer as a ${label} report`,
    }, label);
    link.addEventListener("click", (event) => {
      if (!storedKey()) return; // no key: the browser follows the link
      event.preventDefault();
      saveWithKey(href, `crowdsift-${jobId}.${ext}`, link);
    });
    return link;
  });
  return el("p", { className: "reports" }, "Report: ", links[0], " · ", links[1]);
}

async function saveWithKey(href, filename, link) {
  let response;
  try {
    response = await fetch(href, { headers: authHeaders() });
  } catch {
    response = null;
  }
  if (!response || !response.ok) {
    link.title = `the report could not be fetched (${response ? `HTTP ${response.status}` : "no connection"})`;
    return;
  }
  const url = URL.createObjectURL(await response.blob());
  const save = el("a", { href: url, download: filename, hidden: true });
  document.body.append(save);
  save.click();
  save.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
