import { type ChildProcess, spawn } from 'node:child_process';
import { PassThrough, Readable, Writable } from 'node:stream';
import {
  type ClientContext,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  client as acpClient,
  methods,
  ndJsonStream,
} from '@agentclientprotocol/sdk';
import { CLI } from './cli-process';

type SessionUpdate = SessionNotification['update'];

/** How the test answers a permission request; a promise that never settles leaves it to someone else. */
export type PermissionAnswer = (request: RequestPermissionRequest) => Promise<RequestPermissionResponse>;

/**
 * `durable-agent acp` in a child process, driven by the SDK's own client app: the test is the
 * editor, calling the agent with `agent.request(methods.agent..., params)`. Keeps every session
 * update, every permission request, and every raw JSON-RPC message the agent wrote (to see requests
 * being withdrawn).
 */
export class AcpTestClient {
  readonly updates: SessionUpdate[] = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  readonly rawMessages: Array<{ id?: unknown; method?: string; params?: unknown }> = [];
  stderr = '';
  answerPermission: PermissionAnswer = async (request) => ({
    outcome: { outcome: 'selected', optionId: request.options[0]!.optionId },
  });
  /** The connection's agent side: `request(methods.agent.session.new, params)` and the like. */
  readonly agent: ClientContext;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private readonly waiters: Array<() => void> = [];

  constructor(env: NodeJS.ProcessEnv, args: string[] = []) {
    this.child = spawn(process.execPath, [CLI, 'acp', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => this.child.on('close', resolve));
    const fromAgent = new PassThrough();
    let partial = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line.trim()) this.rawMessages.push(JSON.parse(line));
      this.notify();
    });
    this.child.stdout!.pipe(fromAgent);
    this.agent = acpClient({ name: 'durable-agent tests' })
      .onNotification(methods.client.session.update, ({ params }) => {
        this.updates.push(params.update);
        this.notify();
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => {
        this.permissionRequests.push(params);
        this.notify();
        return this.answerPermission(params);
      })
      .connect(
        ndJsonStream(
          Writable.toWeb(this.child.stdin!),
          Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>,
        ),
      ).agent;
  }

  /** Initializes the connection; `notices`: the editor says it shows notices (`session.notices`). */
  async initialize({ notices = false }: { notices?: boolean } = {}) {
    return this.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
        ...(notices ? { session: { notices: {} } } : {}),
      },
    });
  }

  /** Resolves once `check` holds of what has arrived; fails after `timeoutMs` saying what it waited for. */
  async until<T>(what: string, check: () => T | undefined, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = check();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; agent stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  updatesOf<K extends SessionUpdate['sessionUpdate']>(
    kind: K,
  ): Array<Extract<SessionUpdate, { sessionUpdate: K }>> {
    return this.updates.filter(
      (update): update is Extract<SessionUpdate, { sessionUpdate: K }> => update.sessionUpdate === kind,
    );
  }

  /** The text of every agent_message_chunk so far. */
  agentText(): string {
    return this.updatesOf('agent_message_chunk')
      .map((update) => (update.content.type === 'text' ? update.content.text : ''))
      .join('');
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    this.child.kill(signal);
    return this.exited;
  }

  /** Closes stdin, as an editor does; the agent then stops its worker and exits. */
  async close(): Promise<number | null> {
    this.child.stdin!.end();
    return this.exited;
  }

  private notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
