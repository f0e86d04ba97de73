import { useState } from 'preact/hooks';
import { api, ok } from '../api';
import type { ResponseBody } from '../api-types';
import { signedIn, verifySecondFactor, type SecondFactorDue } from '../people';
import { CopyButton, ErrorBox, SubmitRow, TextField, useAction } from './ui';

type Enrolment = ResponseBody<'startTwoFactorEnrolment', 201>;
type Confirmed = ResponseBody<'confirmTwoFactorEnrolment'>;
/** A half-open session's calls send its CSRF token themselves (the console has no session yet). */
const csrfHeaders = (csrf?: string) => (csrf ? { headers: { 'x-csrf-token': csrf } } : {});

/**
 * The field of a second factor: digits from an app, or a recovery code (letters and a dash). `afterPassword`: asked
 * once a password was accepted (sign-up, joining), which it says.
 */
function CodeField(props: {
  id: string;
  value: string;
  onValue(v: string): void;
  afterPassword?: boolean;
  /** Setting the app up: there are no recovery codes yet. */
  enrolling?: boolean;
}) {
  return (
    <TextField
      id={props.id}
      label="Authentication code"
      help={
        props.enrolling
          ? 'The 6-digit code the app shows now. Your recovery codes come next.'
          : `${props.afterPassword ? 'Your password is right. Now the' : 'The'} 6-digit code of your authenticator app, or one of your recovery codes.`
      }
      autocomplete="one-time-code"
      spellcheck={false}
      required
      value={props.value}
      onValue={props.onValue}
    />
  );
}

/**
 * The code a password form asks for once its answer says a second factor is due (sign-up, joining): `body` for the
 * request (empty until then), `ask()` when the answer asks, and its `field` (nothing until then).
 */
export function useCodeWhenDue(id: string) {
  const [code, setCode] = useState('');
  const [due, setDue] = useState(false);
  return {
    body: due ? { code: code.trim() } : {},
    ask: () => setDue(true),
    field: due && <CodeField id={id} value={code} onValue={setCode} afterPassword />,
  };
}

/** The second step of a password sign-in: a code, or (when the account requires it and there is none) enrolment. */
export function SecondFactorStep({ due, onBack }: { due: SecondFactorDue; onBack(): void }) {
  const [code, setCode] = useState('');
  const { pending, error, run } = useAction();
  if (due.enrolmentRequired)
    return (
      <section aria-labelledby="enrol-required">
        <h2 id="enrol-required">Set up two-factor sign-in</h2>
        <p>This account requires a second factor for password sign-in. Set up an authenticator app to continue.</p>
        <EnrolTwoFactor csrf={due.csrf} onDone={(c) => c.session && signedIn(c.session)} />
        <button type="button" class="link" onClick={onBack}>
          Back to sign-in
        </button>
      </section>
    );
  const submit = (e: Event) => {
    e.preventDefault();
    void run(() => verifySecondFactor(due, code.trim()));
  };
  return (
    <form onSubmit={submit} aria-label="Two-factor sign-in">
      <p>Your password is right. Now enter the code your authenticator app shows.</p>
      <CodeField id="totp-code" value={code} onValue={setCode} />
      <ErrorBox error={error} />
      <SubmitRow pending={pending}>Verify</SubmitRow>
      <button type="button" class="link" onClick={onBack}>
        Back to sign-in
      </button>
    </form>
  );
}

/**
 * Enrolment: start (a QR code and the key to type), confirm with a code, then the recovery codes once. `onDone`
 * runs when the person has seen the codes and continues; `onConfirmed`, given, runs as soon as two-factor is on and
 * shows the codes itself (the Security page, whose status says "On" from then on).
 */
export function EnrolTwoFactor(props: {
  csrf?: string;
  onDone(confirmed: Confirmed): void;
  onConfirmed?(confirmed: Confirmed): void;
}) {
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [confirmed, setConfirmed] = useState<Confirmed | null>(null);
  const [code, setCode] = useState('');
  const { pending, error, run } = useAction();
  const start = () =>
    void run(async () => setEnrolment(await ok(api.POST('/v1/two-factor/enrolment', { ...csrfHeaders(props.csrf) }))));
  const confirm = async (e: Event) => {
    e.preventDefault();
    const done = await run(() =>
      ok(api.POST('/v1/two-factor/enrolment/confirm', { body: { code: code.trim() }, ...csrfHeaders(props.csrf) })),
    );
    if (!done) return;
    if (props.onConfirmed) props.onConfirmed(done);
    else setConfirmed(done);
  };
  if (confirmed)
    return (
      <>
        <RecoveryCodes codes={confirmed.recovery_codes} />
        <button type="button" onClick={() => props.onDone(confirmed)}>
          I have saved my recovery codes
        </button>
      </>
    );
  if (!enrolment)
    return (
      <>
        <ErrorBox error={error} />
        <button type="button" disabled={pending} onClick={start}>
          Set up authenticator app
        </button>
      </>
    );
  return (
    <form onSubmit={confirm} aria-label="Confirm the authenticator">
      <p>Scan this QR code with an authenticator app, then enter the code it shows.</p>
      <QrCode rows={enrolment.qr_modules} />
      <p class="muted small">Cannot scan it? Enter this key in the app instead (time-based, 6 digits, 30 seconds):</p>
      <div class="secret-row">
        <code class="secret" aria-label="Key for manual entry">
          {enrolment.secret}
        </code>
        <CopyButton text={enrolment.secret} />
      </div>
      <CodeField id="enrol-code" value={code} onValue={setCode} enrolling />
      <ErrorBox error={error} />
      <SubmitRow pending={pending}>Turn on two-factor</SubmitRow>
    </form>
  );
}

/**
 * The QR code, drawn from its modules (the API sends them as data): the console's CSP allows images from itself
 * only, and data draws without reading anyone's markup. One path of 1×1 squares, with a quiet zone of 2.
 */
function QrCode({ rows }: { rows: string[] }) {
  const quiet = 2;
  const size = rows.length + 2 * quiet;
  const d = rows
    .flatMap((row, y) => [...row].map((bit, x) => (bit === '1' ? `M${x + quiet} ${y + quiet}h1v1h-1z` : '')))
    .join('');
  return (
    <svg
      class="qr"
      role="img"
      aria-label="QR code for your authenticator app"
      viewBox={`0 0 ${size} ${size}`}
      width={200}
      height={200}
      shape-rendering="crispEdges"
    >
      <rect width="100%" height="100%" fill="#ffffff" />
      <path fill="#000000" d={d} />
    </svg>
  );
}

/** The ten recovery codes, shown once: to copy or download as a text file. */
export function RecoveryCodes({ codes }: { codes: string[] }) {
  const text = `Intake recovery codes (each works once)\n\n${codes.join('\n')}\n`;
  return (
    <div class="notice" role="status">
      <p>
        <strong>Two-factor is on. Your recovery codes</strong> are shown only this once. Each works once, in place of a
        code, if you lose your authenticator: keep them somewhere safe.
      </p>
      <ul class="recovery-codes" aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <CopyButton text={text} label="Copy codes" />
        <a
          class="button secondary"
          download="intake-recovery-codes.txt"
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}
        >
          Download codes
        </a>
      </div>
    </div>
  );
}
