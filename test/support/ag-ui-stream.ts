/** One AG-UI event as the gateway streams it, with the SSE id it came under. */
export interface AgUiFrame {
  id?: string;
  event: { type: string } & Record<string, unknown>;
}

/**
 * Posts an AG-UI run input and reads the events it streams, as a page without the AG-UI client would.
 * `stopAfter`: the page drops the connection right after the first frame it is true for. A refused
 * input (not 200) is answered with its status and JSON body.
 */
export async function postRunInput(
  url: string,
  token: string,
  input: unknown,
  options: {
    lastEventId?: string;
    stopAfter?: (frame: AgUiFrame) => boolean;
    /** Called after each frame: a test may kill the gateway there; the connection breaking then ends the read. */
    onFrame?: (frame: AgUiFrame) => void;
  } = {},
): Promise<{ status: number; frames: AgUiFrame[]; body?: unknown; broken?: boolean }> {
  const drop = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(options.lastEventId !== undefined ? { 'last-event-id': options.lastEventId } : {}),
    },
    body: JSON.stringify(input),
    signal: drop.signal,
  });
  if (response.status !== 200) return { status: response.status, frames: [], body: await response.json() };
  const frames: AgUiFrame[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const frame = parseFrame(buffered.slice(0, end));
        buffered = buffered.slice(end + 2);
        if (!frame) continue;
        frames.push(frame);
        options.onFrame?.(frame);
        if (options.stopAfter?.(frame)) {
          drop.abort();
          return { status: 200, frames };
        }
      }
    }
  } catch (error) {
    if (drop.signal.aborted) return { status: 200, frames };
    // The gateway went away mid-stream (a test killed it): what came before is kept.
    if (options.onFrame) return { status: 200, frames, broken: true };
    throw error;
  }
  return { status: 200, frames };
}

function parseFrame(text: string): AgUiFrame | undefined {
  let id: string | undefined;
  let data = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('id: ')) id = line.slice(4);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (!data) return undefined;
  return { ...(id !== undefined ? { id } : {}), event: JSON.parse(data) as AgUiFrame['event'] };
}

/** The types of frames' events, in order. */
export const typesOf = (frames: AgUiFrame[]) => frames.map((frame) => frame.event.type);
