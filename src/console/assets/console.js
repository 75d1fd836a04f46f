// The console's only script, served from the gateway itself (the page's Content-Security-Policy
// allows no other). Pages work without it; it adds two things:
// - a region marked `data-live="URL"` is fetched again every LIVE_MS and replaced when it changed
//   (HTML the gateway rendered and escaped; the script builds none from data), except while a
//   control inside it is in use or the tab is hidden;
// - a button for a remote image (`button.remote-image`) loads that image when clicked, and only then.
'use strict';

const LIVE_MS = 500;

function keepLive(region) {
  const url = region.getAttribute('data-live');
  let last = region.innerHTML;
  let stopped = false;
  const tick = async () => {
    if (stopped) return;
    const busy = region.contains(document.activeElement) && document.activeElement !== document.body;
    // A tab nobody looks at asks nothing; it catches up when shown again.
    if (!busy && document.visibilityState !== 'hidden') {
      try {
        const response = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } });
        if (response.status === 401) {
          stopped = true;
          region.setAttribute('data-ended', 'signed out');
          document.body.classList.add('signed-out');
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
    }
    setTimeout(tick, LIVE_MS);
  };
  setTimeout(tick, LIVE_MS);
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
document.addEventListener('click', loadImageOnClick);
