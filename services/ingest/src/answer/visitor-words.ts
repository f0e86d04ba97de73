import type { Context } from 'koa';
import { type VisitorPages } from '@intake/shared/contracts';
import { escapeHtml } from '@intake/shared/http';

/** Intake's own words on the pages a visitor's browser is shown, in the languages it speaks. */
const WORDS = {
  en: {
    thanks: 'Thank you',
    received: 'Your submission has been received.',
    notSent: 'Your submission was not sent',
    back: 'Go back',
  },
  de: {
    thanks: 'Vielen Dank',
    received: 'Ihre Nachricht ist angekommen.',
    notSent: 'Ihre Nachricht wurde nicht gesendet',
    back: 'Zurück',
  },
  fr: {
    thanks: 'Merci',
    received: 'Votre envoi a bien été reçu.',
    notSent: 'Votre envoi n’a pas été transmis',
    back: 'Retour',
  },
  es: { thanks: 'Gracias', received: 'Hemos recibido su envío.', notSent: 'Su envío no se ha enviado', back: 'Volver' },
  it: {
    thanks: 'Grazie',
    received: 'Il suo invio è stato ricevuto.',
    notSent: 'Il suo invio non è stato inviato',
    back: 'Indietro',
  },
  nl: {
    thanks: 'Bedankt',
    received: 'Uw inzending is ontvangen.',
    notSent: 'Uw inzending is niet verzonden',
    back: 'Terug',
  },
  pt: {
    thanks: 'Obrigado',
    received: 'O seu envio foi recebido.',
    notSent: 'O seu envio não foi enviado',
    back: 'Voltar',
  },
} as const;
export type Language = keyof typeof WORDS;
const LANGUAGES = Object.keys(WORDS) as Language[];

/** The visitor's language among those Intake speaks (its `Accept-Language`), English when none of them. */
export function visitorLanguage(ctx: Context): Language {
  const chosen = ctx.acceptsLanguages(LANGUAGES);
  return typeof chosen === 'string' && chosen in WORDS ? (chosen as Language) : 'en';
}

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}';

/** A page of a title, paragraphs of text (each escaped; the owner's line breaks kept) and a link back. */
function page(lang: Language, title: string, paragraphs: string[], back: string): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p).replace(/\r?\n/g, '<br>')}</p>`).join('');
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}<p><a href="${back}" onclick="history.back(); return false">${WORDS[lang].back}</a></p></body></html>
`;
}

/** The thank-you page: the owner's title and message, else Intake's own in the visitor's language. */
export function thankYouPage(ctx: Context, pages: VisitorPages | null | undefined): string {
  const lang = visitorLanguage(ctx);
  const own = pages?.thank_you;
  return page(
    lang,
    own?.title ?? WORDS[lang].thanks,
    [own?.message ?? WORDS[lang].received],
    'javascript:history.back()',
  );
}

/**
 * The page of a refused post: the owner's title (else Intake's, in the visitor's language) and message, then the
 * reason as the problem gives it, and a link back (`back`: already escaped).
 */
export function refusedPage(
  ctx: Context,
  pages: VisitorPages | null | undefined,
  reason: { title: string; detail: string },
  back: string,
): string {
  const lang = visitorLanguage(ctx);
  const own = pages?.refused;
  const paragraphs = [...(own?.message ? [own.message] : []), `${reason.title}. ${reason.detail}`];
  return page(lang, own?.title ?? WORDS[lang].notSent, paragraphs, back);
}
