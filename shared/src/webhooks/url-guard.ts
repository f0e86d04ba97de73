import { BlockList, isIP } from 'node:net';
import dns from 'node:dns';

/**
 * SSRF guard for webhook targets: no address of the IANA IPv4 and IPv6 Special-Purpose Address Registries (loopback,
 * private, link-local incl. cloud metadata, shared CGNAT, unique-local, documentation, benchmarking, translation,
 * anycast and AS112 services, reserved), nor multicast, is ever connected to unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is
 * set; not even the entries the registries call globally reachable: none is a webhook receiver. The well-known
 * NAT64 prefix (64:ff9b::/96) alone is judged by the IPv4 address it carries, since an IPv6-only cluster reaches
 * every public receiver through it; IPv4-mapped, IPv4-compatible, SIIT and 6to4/Teredo addresses are refused whole.
 */
const blocked4 = new BlockList();
for (const [net, prefix] of [
  // IANA IPv4 Special-Purpose Address Registry
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (DS-Lite, PCP/TURN anycast, NAT64 discovery)
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.31.196.0', 24], // AS112-v4
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // direct delegation AS112 service
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['240.0.0.0', 4], // reserved, limited broadcast
  // IANA multicast
  ['224.0.0.0', 4],
] as const)
  blocked4.addSubnet(net, prefix, 'ipv4');
// A list of its own: Node's BlockList also checks an IPv4 address against IPv6 rules (as IPv4-mapped), so with
// ::ffff:0:0/96 in one list every IPv4 address would match.
const blocked6 = new BlockList();
for (const [net, prefix] of [
  // IANA IPv6 Special-Purpose Address Registry
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses
  ['::ffff:0:0', 96], // IPv4-mapped
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard-only
  ['100:0:0:1::', 64], // dummy IPv6 prefix
  ['2001::', 23], // IETF protocol assignments: Teredo, PCP/TURN/DNS-SD anycast, benchmarking, AMT, AS112, ORCHID, drone ID
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: carries an IPv4 address that may be private
  ['2620:4f:8000::', 48], // direct delegation AS112 service
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing SIDs
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  // IANA multicast
  ['ff00::', 8],
] as const)
  blocked6.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (handles `::` and a dotted IPv4 tail). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = (v4[1] as string).split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -(v4[1] as string).length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/** The IPv4 address a well-known-prefix NAT64 address (64:ff9b::a.b.c.d) carries, or undefined. */
function nat64Ipv4(groups: number[]): string | undefined {
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (!nat64) return undefined;
  const hi = groups[6] as number;
  const lo = groups[7] as number;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

/** True when `address` (an IP literal, v4 or v6, brackets allowed) must not be connected to. */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return blocked4.check(bare, 'ipv4');
  if (family !== 6) return true; // not an IP at all: refuse rather than guess
  if (blocked6.check(bare, 'ipv6')) return true;
  const v4 = nat64Ipv4(ipv6Groups(bare));
  return v4 !== undefined && blocked4.check(v4, 'ipv4');
}

export class BlockedTargetError extends Error {
  override name = 'BlockedTargetError';
  readonly code = 'EBLOCKEDTARGET';
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * What a refused target is told, whatever the reason: an owner learns that the target is not allowed, never what a
 * name resolved to, nor whether a name that is not public exists inside our network.
 */
export const TARGET_REFUSAL = 'must be an https URL of a host with a public address';

/**
 * A `lookup` for net/tls connect (undici's `connect.lookup`): resolves like dns.lookup, drops addresses inside our
 * network, and fails when none is left. A name with no address at all fails the same way (`BlockedTargetError`, the
 * same message, no address in it), so a failed attempt or test ping never tells a name that resolves inside our
 * network from one that does not exist. Honours `options.all`.
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err && err.code !== 'ENOTFOUND' && err.code !== 'ENODATA') return callback(err, []);
    const allowed = (addresses ?? []).filter((a) => !isBlockedAddress(a.address));
    if (allowed.length === 0) return callback(new BlockedTargetError(`${hostname} has no public address`), []);
    if (options.all) return callback(null, allowed);
    const first = allowed[0] as dns.LookupAddress;
    callback(null, first.address, first.family);
  });
}

/**
 * Why `url` may not be a webhook target, or undefined when it may. Checks the scheme and an
 * IP-literal host without touching the network (used at send time, where the lookup guards names).
 */
export function urlRefusal(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (allowPrivate && parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return 'must be an http or https URL';
  if (!allowPrivate && parsed.protocol !== 'https:') return TARGET_REFUSAL;
  if (parsed.username || parsed.password) return 'must not contain credentials';
  if (allowPrivate) return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return isBlockedAddress(host) ? TARGET_REFUSAL : undefined;
  if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')) return TARGET_REFUSAL;
  return undefined;
}

/**
 * Save-time check: urlRefusal plus a DNS lookup of the name. A name that resolves to a private address, or to none
 * (unknown, or no answer within `lookupTimeoutMs`), gets the same `TARGET_REFUSAL` as any refused URL, so the answer
 * never tells an internal name from a missing one. `lookup` is the system resolver (tests give one of their own).
 */
export async function checkWebhookUrl(
  url: string,
  allowPrivate: boolean,
  options: { lookupTimeoutMs?: number; lookup?: (host: string) => Promise<dns.LookupAddress[]> } = {},
): Promise<string | undefined> {
  const { lookupTimeoutMs = 2000, lookup = (host: string) => dns.promises.lookup(host, { all: true }) } = options;
  const refusal = urlRefusal(url, allowPrivate);
  if (refusal || allowPrivate) return refusal;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return undefined;
  const addresses = await Promise.race([
    lookup(host).catch(() => []),
    new Promise<dns.LookupAddress[]>((resolve) => setTimeout(() => resolve([]), lookupTimeoutMs).unref()),
  ]);
  return addresses.length > 0 && !addresses.some((a) => isBlockedAddress(a.address)) ? undefined : TARGET_REFUSAL;
}
