import { type SafeHtml, html } from './html';

/** What every signed-in page shows around its content. */
export interface PageFrame {
  title: string;
  /** The token's name, shown as who is signed in. */
  who: string;
  csrf: string;
  scriptPath: string;
  stylePath: string;
}

/** A whole page: navigation, who is signed in (with sign out), and the content. */
export function page(frame: PageFrame, content: SafeHtml): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${frame.title} · durable-agent</title>
        <link rel="stylesheet" href="${frame.stylePath}" />
        <script src="${frame.scriptPath}" defer></script>
      </head>
      <body>
        <header>
          <a href="/console">Conversations</a>
          <a href="/console/inbox">Inbox</a>
          <span class="who"
            >signed in as ${frame.who}
            <form method="post" action="/console/sign-out">
              <input type="hidden" name="csrf" value="${frame.csrf}" /><button type="submit">Sign out</button>
            </form>
          </span>
        </header>
        <main>
          <h1>${frame.title}</h1>
          ${content}
        </main>
      </body>
    </html>`;
}

/** The sign-in page: paste a token (a sign-in link from the operator signs in without it). */
export function signInPage(stylePath: string, problem?: string): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="referrer" content="same-origin" />
        <title>Sign in · durable-agent</title>
        <link rel="stylesheet" href="${stylePath}" />
      </head>
      <body>
        <main>
          <h1>Sign in to the durable-agent console</h1>
          ${problem ? html`<p class="error">${problem}</p>` : ''}
          <p>
            Open the sign-in link your operator made (<code>durable-agent console-link --token-name NAME</code
            >), or paste your gateway token.
          </p>
          <form method="post" action="/console/sign-in">
            <label>Token <input type="password" name="token" autocomplete="off" required /></label>
            <button type="submit">Sign in</button>
          </form>
        </main>
      </body>
    </html>`;
}
