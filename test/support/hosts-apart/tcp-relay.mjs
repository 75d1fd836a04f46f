// Passes TCP connections from LISTEN (host:port) to TARGET (host:port) unchanged, byte for byte: on
// the cluster's host, from its link address to its frontend, which listens on 127.0.0.1 only. TLS
// goes through it end to end (it holds no key). Prints `listening` once it does.
import net from 'node:net';

const [listen, target] = process.argv.slice(2).map((address) => {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
});
const server = net.createServer((downstream) => {
  const upstream = net.connect(target.port, target.host);
  for (const [socket, other] of [
    [downstream, upstream],
    [upstream, downstream],
  ]) {
    socket.on('error', () => other.destroy());
    socket.on('close', () => other.destroy());
  }
  downstream.pipe(upstream).pipe(downstream);
});
server.listen(listen.port, listen.host, () => process.stdout.write('listening\n'));
