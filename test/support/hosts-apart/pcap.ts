/**
 * A reader of the classic pcap format (as `tcpdump -w` writes it) on Ethernet, enough to say what
 * crossed a link: the TCP payloads of IPv4 packets, per direction of each connection.
 */
export interface TcpFlow {
  /** `address:port` of the side that sent these bytes, and of the side they went to. */
  from: string;
  to: string;
  /** The payload bytes in the order captured. */
  payload: Buffer;
}

const ETHERNET = 1;
const IPV4 = 0x0800;
const VLAN = 0x8100;
const TCP = 6;

/** Each direction of each TCP connection in the capture, with its payload concatenated. */
export function tcpFlows(capture: Buffer): TcpFlow[] {
  if (capture.length < 24) throw new Error(`not a pcap file: ${capture.length} bytes`);
  const magic = capture.readUInt32LE(0);
  const little = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  if (!little && capture.readUInt32BE(0) !== 0xa1b2c3d4 && capture.readUInt32BE(0) !== 0xa1b23c4d) {
    throw new Error(`not a pcap file: magic ${magic.toString(16)}`);
  }
  const u32 = (at: number) => (little ? capture.readUInt32LE(at) : capture.readUInt32BE(at));
  if (u32(20) !== ETHERNET) throw new Error(`pcap link type ${u32(20)}, not Ethernet`);
  const flows = new Map<string, { from: string; to: string; parts: Buffer[] }>();
  for (let at = 24; at + 16 <= capture.length;) {
    const length = u32(at + 8);
    const frame = capture.subarray(at + 16, Math.min(at + 16 + length, capture.length));
    at += 16 + length;
    const segment = tcpSegment(frame);
    if (!segment || segment.payload.length === 0) continue;
    const key = `${segment.from}>${segment.to}`;
    const flow = flows.get(key) ?? { from: segment.from, to: segment.to, parts: [] };
    flow.parts.push(segment.payload);
    flows.set(key, flow);
  }
  return [...flows.values()].map(({ from, to, parts }) => ({ from, to, payload: Buffer.concat(parts) }));
}

function tcpSegment(frame: Buffer): { from: string; to: string; payload: Buffer } | undefined {
  let offset = 12;
  if (frame.length < offset + 2) return undefined;
  let type = frame.readUInt16BE(offset);
  if (type === VLAN) {
    offset += 4;
    if (frame.length < offset + 2) return undefined;
    type = frame.readUInt16BE(offset);
  }
  if (type !== IPV4) return undefined;
  const ip = frame.subarray(offset + 2);
  if (ip.length < 20 || ip[0]! >> 4 !== 4 || ip[9] !== TCP) return undefined;
  const headerLength = (ip[0]! & 0x0f) * 4;
  const total = Math.min(ip.readUInt16BE(2), ip.length);
  const tcp = ip.subarray(headerLength, total);
  if (tcp.length < 20) return undefined;
  const address = (at: number) => `${ip[at]}.${ip[at + 1]}.${ip[at + 2]}.${ip[at + 3]}`;
  return {
    from: `${address(12)}:${tcp.readUInt16BE(0)}`,
    to: `${address(16)}:${tcp.readUInt16BE(2)}`,
    payload: tcp.subarray((tcp[12]! >> 4) * 4),
  };
}

/** Whether a client's payload opens with a TLS handshake record (a ClientHello). */
export function opensWithTlsHandshake(payload: Buffer): boolean {
  // A record of type 22 (handshake), version 3.x, then a handshake message of type 1 (ClientHello).
  return payload.length > 5 && payload[0] === 0x16 && payload[1] === 0x03 && payload[5] === 0x01;
}

/** Whether a server's payload opens with a TLS handshake record (a ServerHello). */
export function answersWithTlsHandshake(payload: Buffer): boolean {
  return payload.length > 5 && payload[0] === 0x16 && payload[1] === 0x03 && payload[5] === 0x02;
}
