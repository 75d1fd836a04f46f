// A real PostgreSQL (PGlite) on 127.0.0.1 in its own process (PGlite is ESM only, jest runs CommonJS).
// Prints `listening PORT` once ready; stops on SIGTERM or when stdin closes.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const db = await PGlite.create();
const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 16 });
await server.start();
process.stdout.write(`listening ${server.getServerConn().split(':').pop()}\n`);
const stop = async () => {
  await server.stop();
  await db.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('close', stop);
process.stdin.resume();
