import { parseArgs } from 'node:util';
import { UsageError } from '../usage-error';

/**
 * `console-link --token-name NAME [--minutes N]`: a one-time sign-in link to the console of the
 * gateway at DURABLE_AGENT_GATEWAY_URL (or `--gateway-url`), for a token of the tokens file the
 * gateway reads (`--tokens FILE` or DURABLE_AGENT_GATEWAY_TOKENS). The link works once, for N
 * minutes (default 10), and signs the person in as that token.
 */
export async function consoleLinkCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'token-name': { type: 'string' },
      minutes: { type: 'string' },
      tokens: { type: 'string' },
      'gateway-url': { type: 'string' },
    },
  });
  const name = values['token-name'];
  if (!name)
    throw new UsageError('console-link needs --token-name NAME (a token of the gateway tokens file)');
  const tokensFile = values.tokens ?? process.env.DURABLE_AGENT_GATEWAY_TOKENS;
  if (!tokensFile)
    throw new UsageError(
      'console-link needs the gateway token file: --tokens FILE or DURABLE_AGENT_GATEWAY_TOKENS',
    );
  const gatewayUrl = values['gateway-url'] ?? process.env.DURABLE_AGENT_GATEWAY_URL;
  if (!gatewayUrl)
    throw new UsageError(
      'console-link needs the gateway address: --gateway-url URL or DURABLE_AGENT_GATEWAY_URL',
    );
  try {
    new URL(gatewayUrl);
  } catch {
    throw new UsageError(`not a URL: ${gatewayUrl}`);
  }
  const [{ GatewayTokens }, { DEFAULT_LINK_MINUTES, signInLink }] = await Promise.all([
    import('../../gateway/gateway-tokens'),
    import('../../console/sign-in-link'),
  ]);
  const minutes = Number(values.minutes ?? DEFAULT_LINK_MINUTES);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
    throw new UsageError(`--minutes takes a number from 1 to 1440, not ${values.minutes}`);
  const tokens = GatewayTokens.fromFile(tokensFile);
  const token = tokens.byName(name);
  if (!token) throw new UsageError(`the gateway token file ${tokensFile} has no token named ${name}`);
  tokens.recheck(token);
  process.stdout.write(
    `${signInLink(gatewayUrl, name, tokens.keyOf(token), Date.now() + minutes * 60_000)}\n`,
  );
  return 0;
}
