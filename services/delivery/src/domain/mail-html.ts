import Mustache from 'mustache';

/**
 * The HTML parts of the mails a form sends, from logic-less templates of our own (Mustache): every value from a post or
 * an owner's template goes in through `{{…}}`, which escapes it, never as markup. Inline styles only, as mail clients
 * read them. The text part says the same.
 */
const LAYOUT_START =
  '<!doctype html><html><head><meta charset="utf-8"><title>{{title}}</title></head>' +
  '<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;' +
  'color:#1f2328;line-height:1.5;font-size:15px">';
const LAYOUT_END = '</body></html>';
const PARAGRAPHS = '{{#paragraphs}}<p style="margin:0 0 12px">{{#lines}}{{.}}<br>{{/lines}}</p>{{/paragraphs}}';
const FIELDS =
  '{{#hasFields}}<table cellpadding="6" cellspacing="0" style="border-collapse:collapse;margin:0 0 16px">' +
  '{{#fields}}<tr><th align="left" valign="top" style="border-bottom:1px solid #d0d7de;color:#57606a;' +
  'font-weight:600">{{name}}</th><td style="border-bottom:1px solid #d0d7de;white-space:pre-wrap">{{value}}</td>' +
  '</tr>{{/fields}}</table>{{/hasFields}}';
const FILES =
  '{{#hasFiles}}<p style="margin:0 0 4px;font-weight:600">Files (links expire in 7 days)</p><ul style="margin:0 0 ' +
  '16px">{{#files}}<li><a href="{{url}}">{{filename}}</a> ({{field}}, {{size}} bytes)</li>{{/files}}</ul>{{/hasFiles}}';
const BUTTON =
  '{{#link}}<p style="margin:16px 0"><a href="{{href}}" style="display:inline-block;padding:8px 14px;' +
  'background:#3b4fd8;color:#ffffff;border-radius:6px;text-decoration:none">{{label}}</a></p>{{/link}}';

const NOTIFICATION =
  LAYOUT_START +
  '{{#heading}}<h1 style="font-size:18px;margin:0 0 4px">{{title}}</h1>' +
  '<p style="margin:0 0 16px;color:#57606a">{{received}}</p>{{/heading}}' +
  PARAGRAPHS +
  FIELDS +
  FILES +
  BUTTON +
  LAYOUT_END;
const LETTER = LAYOUT_START + PARAGRAPHS + LAYOUT_END;
const DIGEST =
  LAYOUT_START +
  '<h1 style="font-size:18px;margin:0 0 4px">{{title}}</h1><p style="margin:0 0 16px;color:#57606a">{{period}}</p>' +
  '{{#items}}<div style="margin:0 0 12px;padding:0 0 12px;border-bottom:1px solid #d0d7de">' +
  '<p style="margin:0;color:#57606a">{{received}}</p><p style="margin:0">{{summary}}</p>' +
  '{{#href}}<a href="{{href}}">Open it</a>{{/href}}</div>{{/items}}<p style="margin:0 0 12px">{{more}}</p>' +
  BUTTON +
  LAYOUT_END;

/** Text as paragraphs of lines (blank lines part paragraphs), for `{{#paragraphs}}`. */
function paragraphs(text: string): { lines: string[] }[] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/^\n+|\n+$/g, ''))
    .filter((p) => p.trim() !== '')
    .map((p) => ({ lines: p.split('\n') }));
}

export interface NotificationHtml {
  /** The document's title (the mail's subject). */
  title: string;
  /** Intake's heading and when the submission arrived: above Intake's own body only, never above the owner's text. */
  heading?: { title: string; received: string };
  /** The owner's text, filled, when the form has one; else the fields. */
  text?: string;
  fields: { name: string; value: string }[];
  files: { filename: string; field: string; size: number; url: string }[];
  /** The console's link: only for a recipient who can open it. */
  link?: { href: string; label: string };
}

export function notificationHtml(view: NotificationHtml): string {
  return Mustache.render(NOTIFICATION, {
    ...view,
    paragraphs: view.text === undefined ? [] : paragraphs(view.text),
    fields: view.text === undefined ? view.fields : [],
    hasFields: view.text === undefined && view.fields.length > 0,
    hasFiles: view.files.length > 0,
  });
}

/** A letter of plain text (an autoresponse) as HTML. */
export function letterHtml(title: string, text: string): string {
  return Mustache.render(LETTER, { title, paragraphs: paragraphs(text) });
}

export interface DigestHtml {
  title: string;
  period: string;
  /** `href` only for a recipient who can open the console. */
  items: { received: string; summary: string; href?: string }[];
  more: string;
  link?: { href: string; label: string };
}

export function digestHtml(view: DigestHtml): string {
  return Mustache.render(DIGEST, view);
}
