// The console's only script, served from the gateway itself (the page's Content-Security-Policy
// allows no other). Pages work without it; it adds two things:
// - a region marked `data-live="URL"` is fetched again every LIVE_MS and replaced when it changed
//   (HTML the gateway rendered and escaped; the script builds none from data), except while a
//   control inside it is in use or the tab is hidden; its `data-reads` counts the reads done (what
//   a test waits for: the page has been rendered again at least that often);
// - a button for a remote image (`button.remote-image`) loads that image when clicked, and only then;
// - a section marked `data-stream="URL"` shows the run in progress from that server-sent event
//   stream: the model's text as it streams and a tool's progress, set as text (never as HTML); a
//   kept event there has the live regions read again at once.
'use strict';

const LIVE_MS = 500;

/** Each live region's "read it again now". */
const refreshers = [];

function signedOut() {
  document.body.classList.add('signed-out');
}

function keepLive(region) {
  const url = region.getAttribute('data-live');
  let last = region.innerHTML;
  let stopped = false;
  let timer;
  let reading = false;
  let reads = 0;
  const tick = async () => {
    clearTimeout(timer);
    if (stopped || reading) return;
    reading = true;
    const busy = region.contains(document.activeElement) && document.activeElement !== document.body;
    // A tab nobody looks at asks nothing; it catches up when shown again.
    if (!busy && document.visibilityState !== 'hidden') {
      try {
        const response = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } });
        if (response.status === 401) {
          stopped = true;
          region.setAttribute('data-ended', 'signed out');
          signedOut();
          return;
        }
        if (response.ok) {
          const text = await response.text();
          if (text !== last) {
            region.innerHTML = text;
            last = region.innerHTML;
          }
        }
      } catch {
        // The gateway is away for a moment: asked again at the next tick.
      }
      region.setAttribute('data-reads', String(++reads));
    }
    reading = false;
    timer = setTimeout(tick, LIVE_MS);
  };
  timer = setTimeout(tick, LIVE_MS);
  refreshers.push(tick);
}

function followRun(section) {
  const text = section.querySelector('.run-text');
  const progress = section.querySelector('.run-progress');
  let call;
  let shown = '';
  const stream = new EventSource(section.getAttribute('data-stream'));
  stream.addEventListener('text', (event) => {
    const data = JSON.parse(event.data);
    if (data.call !== call) {
      call = data.call;
      shown = '';
    }
    // Text from `offset` on: what was seen before it stays; a gap (text never seen) shows as one mark.
    shown = data.offset > shown.length ? `${shown}…${data.text}` : shown.slice(0, data.offset) + data.text;
    text.textContent = shown;
    section.hidden = false;
  });
  stream.addEventListener('progress', (event) => {
    const data = JSON.parse(event.data);
    progress.textContent = `${data.toolName}: ${data.text}`;
    section.hidden = false;
  });
  stream.addEventListener('changed', (event) => {
    const data = JSON.parse(event.data);
    // The answer is kept now: the transcript shows it once read again.
    if (data.type === 'run_finished' || data.type === 'model_response') {
      call = undefined;
      shown = '';
      text.textContent = '';
      progress.textContent = '';
      section.hidden = true;
    }
    refreshers.forEach((refresh) => refresh());
  });
  stream.addEventListener('error', (event) => {
    // An `error` the gateway sent ends the stream (a 401 ends the session); a lost connection is
    // asked again by the browser itself.
    if (!event.data) return;
    stream.close();
    if (JSON.parse(event.data).status === 401) signedOut();
  });
}

function loadImageOnClick(event) {
  const button = event.target instanceof Element ? event.target.closest('button.remote-image') : null;
  if (!button) return;
  const image = document.createElement('img');
  image.src = button.getAttribute('data-src');
  image.alt = button.textContent;
  image.referrerPolicy = 'no-referrer';
  image.className = 'loaded-image';
  button.replaceWith(image);
}

document.querySelectorAll('[data-live]').forEach(keepLive);
document.querySelectorAll('[data-stream]').forEach(followRun);
document.addEventListener('click', loadImageOnClick);
