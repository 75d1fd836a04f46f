import { readSigningKey, signDelegation } from '../../client/sign-decision';
import { MAX_DELEGATION_MS } from '../../shared/signed-decisions';
import type { Cleanups } from '../cleanups';
import { durationArg, namedPositionals, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';
import { currentUserName } from '../user-name';

export interface DelegateArgs {
  from: string;
  to: string;
  forMs: number;
  keyFile: string;
}

export function parseDelegateArgs(args: string[], defaultBy: () => string = currentUserName): DelegateArgs {
  const { values, positionals } = parseCommandArgs('delegate', {
    args,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      for: { type: 'string' },
      key: { type: 'string' },
      by: { type: 'string' },
    },
  });
  namedPositionals('delegate', positionals, [] as const);
  if (!values.to) throw new UsageError('delegate: --to NAME names who decides in your place');
  if (!values.for) throw new UsageError('delegate: --for DURATION says for how long (such as 8h or 3d)');
  if (!values.key) throw new UsageError('delegate: --key FILE is your Ed25519 private key (PEM)');
  const forMs = durationArg(values.for, '--for');
  if (forMs > MAX_DELEGATION_MS)
    throw new UsageError(`delegate: --for is at most ${MAX_DELEGATION_MS / 86_400_000}d`);
  return { from: values.by ?? defaultBy(), to: values.to, forMs, keyFile: values.key };
}

/**
 * `delegate`: prints a delegation signed with the delegator's key (JSON), which the delegate gives
 * `approve --delegation FILE` to decide in the delegator's place under an approval policy. Needs no
 * server: the conversation checks the signature when a decision carries it.
 */
export async function delegateCommand(args: string[], _cleanups: Cleanups): Promise<number> {
  const delegate = parseDelegateArgs(args);
  const key = readSigningKey(delegate.keyFile);
  const delegation = signDelegation(delegate.from, delegate.to, Date.now() + delegate.forMs, key);
  process.stdout.write(`${JSON.stringify({ ...delegation, to: delegate.to })}\n`);
  return 0;
}
