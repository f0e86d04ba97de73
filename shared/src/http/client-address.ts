import { isIP } from 'node:net';

/**
 * Who a client is counted as, by every per-client limit (ingest's rate limit, failed sign-ins): an IPv4 client by its address, an IPv6 client by its /64. One subscriber
 * usually holds a whole /64 and picks addresses in it freely (privacy extensions rotate them), so keying on the
 * full address would give one sender 2^64 budgets. An IPv4-mapped address (`::ffff:a.b.c.d`) is its IPv4 address.
 */
export function clientKey(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const bare = ip.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1] as string;
  const [head = '', tail] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // A dotted IPv4 tail fills the last two groups, which lie outside the /64 anyway.
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
