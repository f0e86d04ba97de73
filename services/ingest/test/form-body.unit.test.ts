import http from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { isProblem } from '@intake/shared/contracts';
import { eventually } from '@intake/shared/testing';
import { LIMITS } from '../src/read/limits';
import { parseUrlencoded, readBounded } from '../src/read/body';

/** What a form body decodes to, or the problem slug it is refused with. */
function decode(raw: Buffer): [string, string][] | string {
  try {
    return parseUrlencoded(raw);
  } catch (err) {
    if (isProblem(err)) return err.slug;
    throw err;
  }
}

/**
 * The WHATWG application/x-www-form-urlencoded parser, byte by byte as the standard writes it
 * (split on `&` and the first `=`, `+` to a space, percent-decode the bytes, UTF-8 decode without
 * BOM), then strict UTF-8 in place of its replacement characters. (Node 20's URLSearchParams cannot serve: it turns `é%%41`
 * into `\uFFFD%A`.)
 */
function reference(raw: Buffer): [string, string][] | string {
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const unescape = (bytes: Buffer): string => {
    const out: number[] = [];
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i] as number;
      const hex = bytes.subarray(i + 1, i + 3).toString('latin1');
      if (byte === 0x25 && /^[0-9a-fA-F]{2}$/.test(hex)) {
        out.push(parseInt(hex, 16));
        i += 2;
      } else out.push(byte === 0x2b ? 0x20 : byte);
    }
    return strict.decode(Buffer.from(out));
  };
  try {
    strict.decode(raw);
    const pairs: [string, string][] = [];
    let start = 0;
    for (let end = 0; end <= raw.length; end++) {
      if (end < raw.length && raw[end] !== 0x26) continue;
      const sequence = raw.subarray(start, end);
      start = end + 1;
      if (sequence.length === 0) continue;
      const eq = sequence.indexOf(0x3d);
      pairs.push(
        eq === -1
          ? [unescape(sequence), '']
          : [unescape(sequence.subarray(0, eq)), unescape(sequence.subarray(eq + 1))],
      );
    }
    return pairs;
  } catch {
    return 'bad-body';
  }
}

describe('application/x-www-form-urlencoded bodies', () => {
  it('gives back every name and value a browser encoded, in order', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { maxLength: 8 }), fc.boolean(), (pairs, plusForSpace) => {
        const encode = (s: string) =>
          plusForSpace ? encodeURIComponent(s).replace(/%20/g, '+') : encodeURIComponent(s);
        const body = pairs.map(([name, value]) => `${encode(name)}=${encode(value)}`).join('&');
        expect(decode(Buffer.from(body))).toEqual(pairs);
      }),
    );
  });

  it('reads bodies as the WHATWG form parser does, and refuses with bad-body what is not UTF-8 once unescaped', () => {
    // Pieces a hostile client can put together: stray and partial escapes, escapes of invalid UTF-8
    // (a lone byte, a surrogate, a truncated sequence), raw non-ASCII text and raw bytes.
    const piece = fc.constantFrom(
      ...['a', 'B', '=', '&', '+', '%', '%2', '%4', '%41', '%2B', '%26', '%3D', '%25', '%00', '%zz', ' ', 'é', '€'],
      ...['%c3%a9', '%E2%82%AC', '%f0%9f%98%80', '%E2%82', '%ff', '%C0%AF', '%ed%a0%80', '%f4%90%80%80'],
      // A byte-order mark, escaped or not, is text like any other (WHATWG: "UTF-8 decode without BOM").
      ...['%EF%BB%BF', '\uFEFF'],
    );
    const rawByte = fc.integer({ min: 0x80, max: 0xff }).map((b) => Buffer.from([b]));
    const body = fc
      .array(fc.oneof({ weight: 9, arbitrary: piece.map((p) => Buffer.from(p)) }, { weight: 1, arbitrary: rawByte }), {
        maxLength: 16,
      })
      .map((parts) => Buffer.concat(parts));
    fc.assert(
      fc.property(body, (raw) => {
        expect(decode(raw)).toEqual(reference(raw));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('reading a form or JSON body', () => {
  let server: http.Server;
  let url: string;
  let onRequest: (req: http.IncomingMessage) => Promise<Buffer>;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      onRequest(req).then(
        (body) => res.end(body.toString('hex')),
        (err: { slug?: string }) => res.end(`refused: ${err.slug}`),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /**
   * Posts `first`, then `rest` once the server has the request. `whole`: the server reads once
   * all of it has arrived; else it starts reading at once, before `rest` is sent.
   */
  async function post(first: Buffer, rest: Buffer, whole: boolean): Promise<string> {
    let seen!: () => void;
    const requestSeen = new Promise<void>((resolve) => (seen = resolve));
    onRequest = async (req) => {
      seen();
      if (whole) await eventually(() => req.complete, { message: 'the whole body arrived' });
      else expect(req.complete).toBe(false);
      // A body that arrived whole is taken in one read; one still arriving is read as it comes.
      const iterate = jest.spyOn(req, Symbol.asyncIterator);
      const body = await readBounded(req, undefined);
      expect(iterate).toHaveBeenCalledTimes(whole ? 0 : 1);
      return body;
    };
    const req = http.request(url, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } });
    const answer = new Promise<string>((resolve, reject) => {
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
    });
    req.write(first);
    await requestSeen;
    req.end(rest);
    return answer;
  }

  const first = Buffer.from('name=Ada&email=ada%40');
  const rest = Buffer.from('example.com&n=1');
  const both = Buffer.concat([first, rest]).toString('hex');

  it('reads a body that had arrived whole, and one that arrives while it is read, alike', async () => {
    expect(await post(first, rest, true)).toBe(both);
    expect(await post(first, rest, false)).toBe(both);
    expect(await post(Buffer.alloc(0), Buffer.alloc(0), true)).toBe('');
  });

  it('refuses a body larger than the limit, as it arrives or when it had arrived whole', async () => {
    const large = Buffer.alloc(LIMITS.bodyBytes, 0x61);
    expect(await post(large, Buffer.from('b'), false)).toBe('refused: body-too-large');
    // Whole before it is read: a request whose buffer already holds all of it (Node pauses the
    // socket at 16 KiB, so only a stream can stand in for one this large).
    const arrived = Object.assign(new Readable({ read: () => undefined }), { complete: true });
    arrived.push(Buffer.concat([large, Buffer.from('b')]));
    arrived.push(null);
    await expect(readBounded(arrived as unknown as http.IncomingMessage, undefined)).rejects.toMatchObject({
      slug: 'body-too-large',
    });
  });
});
