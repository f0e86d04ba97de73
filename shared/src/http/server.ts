import http from 'node:http';
import type { Socket } from 'node:net';
import { problem, type Problem } from '../contracts/problems';

/**
 * The time limits of a public HTTP endpoint (docs/decisions/operations.md#http):
 * - `headersTimeoutMs`: the whole request head must arrive within this (a client sending its
 *   headers a byte a second is answered 408 and closed);
 * - `minBodyBytesPerSecond` over `bodyWindowMs`: a body must keep arriving at least this fast,
 *   window after window, or the request is answered 408 and closed. A rate and not a total time,
 *   so a 50 MB upload on a slow link is fine while a connection that never sends its body is not.
 *   A window in which the server itself was not reading (its buffer full, e.g. files being
 *   written) does not count against the client;
 * - `requestTimeoutMs`: an absolute cap on one request, far above what the rate allows for the
 *   largest accepted body;
 * - `keepAliveTimeoutMs`: how long an idle kept-alive connection stays open, longer than the 60 s
 *   idle timeout of common load balancers and ingresses so that they, not we, close it.
 */
export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  minBodyBytesPerSecond: number;
  bodyWindowMs: number;
  /** How often the limits are checked. */
  checkIntervalMs: number;
}

export const SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 2 * 60 * 60_000,
  keepAliveTimeoutMs: 65_000,
  minBodyBytesPerSecond: 8 * 1024,
  bodyWindowMs: 10_000,
  checkIntervalMs: 1_000,
};

/** What an HTTP-level refusal (from Node's parser, or a timeout) is, as a problem. */
function clientErrorProblem(code: string | undefined): Problem {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem('request-timeout', 'The request did not arrive in time');
    case 'HPE_HEADER_OVERFLOW':
      return problem('headers-too-large', 'The request head is larger than this server accepts');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return problem('body-too-large', 'The chunk extensions are larger than this server accepts');
    case 'HPE_INVALID_EOF_STATE':
      return problem(
        'bad-body',
        'The connection ended before the whole body arrived (shorter than its Content-Length)',
      );
    default:
      return problem('bad-request', 'The request is not valid HTTP/1.1');
  }
}

function send(res: http.ServerResponse, p: Problem, problemsUrl: string): void {
  const body = JSON.stringify(p.toJSON(problemsUrl));
  res.writeHead(p.status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * The response each socket is answering now, followed through the public 'request' event: one map
 * write per request, nothing else on the request's way. A response that has finished is no longer
 * the socket's (Node detaches it then), so it counts as none.
 */
function responsesBySocket() {
  const answering = new WeakMap<Socket, http.ServerResponse>();
  return {
    get(socket: Socket): http.ServerResponse | undefined {
      const res = answering.get(socket);
      return res && !res.writableFinished ? res : undefined;
    },
    follow(req: http.IncomingMessage, res: http.ServerResponse): void {
      answering.set(req.socket, res);
    },
  };
}

/** Answers `p` on a socket Node's parser gave up on (there is no response object yet, or one not begun). */
function answerOnSocket(
  socket: Socket,
  outgoing: http.ServerResponse | undefined,
  p: Problem,
  problemsUrl: string,
): void {
  if (outgoing && !outgoing.headersSent && outgoing.writable) {
    send(outgoing, p, problemsUrl);
    return;
  }
  if (outgoing || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(p.toJSON(problemsUrl));
  socket.end(
    `HTTP/1.1 ${p.status} ${http.STATUS_CODES[p.status]}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

interface BodyWatch {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  windowStart: number;
  bytesAtStart: number;
  /** The application stopped reading during this window (its buffer was full): not the client's fault. */
  ourStall: boolean;
}

/**
 * Watches the bodies of the requests in flight, all on one timer (nothing per request but a set
 * entry): a body below the minimum rate for a whole window, not because we stopped reading, is
 * answered 408 and its connection closed.
 */
function bodyRateWatcher(limits: ServerLimits, problemsUrl: string) {
  const watched = new Set<BodyWatch>();
  let timer: NodeJS.Timeout | undefined;
  const check = (w: BodyWatch, now: number): void => {
    const { req, res } = w;
    const socket = req.socket;
    if (req.complete || res.writableEnded || socket.destroyed) {
      watched.delete(w);
      return;
    }
    if (req.readableLength >= req.readableHighWaterMark) w.ourStall = true;
    if (now - w.windowStart < limits.bodyWindowMs) return;
    const arrived = socket.bytesRead - w.bytesAtStart;
    if (!w.ourStall && arrived < (limits.minBodyBytesPerSecond * (now - w.windowStart)) / 1000) {
      watched.delete(w);
      const p = problem(
        'request-timeout',
        `The body arrived slower than ${limits.minBodyBytesPerSecond} bytes a second; the connection is closed`,
      );
      if (res.headersSent) socket.destroy();
      else {
        send(res, p, problemsUrl);
        res.once('finish', () => socket.destroySoon());
      }
      return;
    }
    w.windowStart = now;
    w.bytesAtStart = socket.bytesRead;
    w.ourStall = false;
  };
  const tick = (): void => {
    const now = Date.now();
    for (const w of watched) check(w, now);
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  return (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (req.complete) return;
    const w: BodyWatch = { req, res, windowStart: Date.now(), bytesAtStart: req.socket.bytesRead, ourStall: false };
    watched.add(w);
    res.once('close', () => watched.delete(w));
    if (!timer) {
      timer = setInterval(tick, limits.checkIntervalMs);
      timer.unref();
    }
  };
}

/**
 * The HTTP server every service listens with: the limits above, problem documents (not Node's bare
 * text) for requests its parser refuses or that time out, and an answer for a client that
 * half-closes its side after sending a request.
 */
export function createHttpServer(
  handler: http.RequestListener,
  options: { problemsUrl: string; limits?: Partial<ServerLimits> },
): http.Server {
  const limits = { ...SERVER_LIMITS, ...options.limits };
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    handler,
  );
  // A client that sends its request and then shuts down its writing side (FIN) still gets the answer.
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const responses = responsesBySocket();
  server.on('request', responses.follow);
  server.on('request', bodyRateWatcher(limits, options.problemsUrl));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    answerOnSocket(socket, responses.get(socket), clientErrorProblem(err.code), options.problemsUrl);
  });
  return server;
}
