import { isGrpcServiceError } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** gRPC status codes a server still starting answers with. */
const NOT_FOUND = 5;
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
/** How often a server still starting is asked again. */
const RETRY_MS = 250;

export interface ServerWait {
  address: string;
  namespace: string;
  /** How long to wait for a server still starting before giving up. */
  timeoutMs: number;
  log: (line: string) => void;
}

type NamespaceDescriber = {
  workflowService: Pick<temporal.api.workflowservice.v1.WorkflowService, 'describeNamespace'>;
};

/**
 * Connects with `connect` and waits until the server serves `namespace`. A Temporal server that is
 * still starting refuses connections, or accepts them before its namespace is registered (a script
 * that waits for the port and then starts a worker meets exactly that): both are waited out for
 * `timeoutMs`, saying once what is awaited. Anything else (a wrong API key, a TLS mismatch) fails at once.
 */
export async function connectWhenServing<C extends NamespaceDescriber & { close(): Promise<void> }>(
  connect: () => Promise<C>,
  wait: ServerWait,
): Promise<C> {
  const deadline = Date.now() + wait.timeoutMs;
  let said = false;
  const waitFor = `${Math.round(wait.timeoutMs / 1_000)} s`;
  /** `problem` reads "the Temporal server at ADDRESS does not ...". */
  const waitOrThrow = async (error: unknown, problem: string) => {
    if (Date.now() + RETRY_MS > deadline) {
      throw new Error(
        `${problem} after ${waitFor} (${(error as Error).message}); ` +
          'start the server (`durable-agent server`), check TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE, ' +
          'or wait longer with DURABLE_AGENT_SERVER_WAIT_MS',
        { cause: error },
      );
    }
    if (!said) {
      wait.log(
        `${problem[0]!.toUpperCase()}${problem.slice(1)} yet (still starting?): waiting up to ${waitFor}.`,
      );
      said = true;
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  };
  for (;;) {
    let connection: C;
    try {
      connection = await connect();
    } catch (error) {
      if (!isStarting(error)) throw error;
      await waitOrThrow(error, `the Temporal server at ${wait.address} does not answer`);
      continue;
    }
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace: wait.namespace });
        return connection;
      } catch (error) {
        if (!isGrpcServiceError(error) || ![NOT_FOUND, UNAVAILABLE, DEADLINE_EXCEEDED].includes(error.code)) {
          await connection.close().catch(() => undefined);
          throw error;
        }
        try {
          await waitOrThrow(
            error,
            `the Temporal server at ${wait.address} does not serve namespace '${wait.namespace}'`,
          );
        } catch (timedOut) {
          await connection.close().catch(() => undefined);
          throw timedOut;
        }
      }
    }
  }
}

/**
 * Whether a failed connect is a server not (yet) listening, or listening but not serving yet
 * (Temporal's frontend answers UNAVAILABLE until its services have joined), rather than one that
 * refused us. A native (worker) connection reports the status of its first call only in its message.
 */
function isStarting(error: unknown): boolean {
  const message = (error as Error)?.message ?? '';
  const cause = (error as Error)?.cause;
  return (
    /ConnectionRefused|ConnectionReset|Connection refused|ECONNREFUSED|tcp connect error|Failed to connect before the deadline|The service is currently unavailable/i.test(
      message,
    ) ||
    [error, cause].some(
      (candidate) =>
        isGrpcServiceError(candidate) && [UNAVAILABLE, DEADLINE_EXCEEDED].includes(candidate.code),
    )
  );
}
