// A short process like a CLI command: picks the blob store its environment names, stores and
// reads back one blob, prints what it saw as JSON, and then simply ends; nothing is closed, so
// the process exits only if the store leaves nothing holding it open.
import { randomBytes } from 'node:crypto';
import { blobStoreFromEnv } from '../../src/worker/blob-store-from-env';

const CLIENT_LIBRARIES = /[\\/]node_modules[\\/](@aws-sdk[\\/]client-s3|pg)[\\/]/;
const clientLibraryLoaded = () => Object.keys(require.cache).some((file) => CLIENT_LIBRARIES.test(file));

async function main(): Promise<void> {
  const store = blobStoreFromEnv(process.env);
  const loadedBeforeUse = clientLibraryLoaded();
  const bytes = randomBytes(50_000);
  const key = await store.put(bytes);
  const readBack = Buffer.from(await store.get(key)).equals(bytes);
  process.stdout.write(
    `${JSON.stringify({ loadedBeforeUse, loadedAfterUse: clientLibraryLoaded(), readBack })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
