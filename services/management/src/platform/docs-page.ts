import { escapeHtml } from '@intake/shared/http';
import type { ProblemDescription } from './problem-catalogue';

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}code,pre{font:13px ui-monospace,monospace}
pre{background:#f5f6f8;padding:.6rem;overflow:auto;border-radius:4px}
details{border:1px solid #e2e4e8;border-radius:4px;margin:.4rem 0;padding:.3rem .6rem}
summary{cursor:pointer}.m{display:inline-block;min-width:4.2rem;font-weight:600}
.GET{color:#0a7}.POST{color:#36c}.PATCH{color:#b70}.DELETE{color:#c33}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}`;

/**
 * The readable API reference at `/docs`: one self-contained page (no CDN, no bundle) that
 * fetches `/openapi` and renders every operation with its parameters, body and responses.
 */
export function docsPage(openApiPath: string): string {
  const script = `
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'})[c]);
const json = (v) => '<pre>' + esc(JSON.stringify(v, null, 2)) + '</pre>';
fetch(${JSON.stringify(openApiPath)}).then((r) => r.json()).then((doc) => {
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    for (const tag of op.tags || ['Other']) (byTag[tag] = byTag[tag] || []).push({ path, method: method.toUpperCase(), op });
  }
  let html = '<h1>' + esc(doc.info.title) + ' <small>' + esc(doc.info.version) + '</small></h1><p>' + esc(doc.info.description) + '</p>';
  html += '<p>Server: <code>' + esc(doc.servers[0].url) + '</code>. Machine-readable: <a href="${openApiPath}">OpenAPI 3.1</a>.</p>';
  for (const [tag, ops] of Object.entries(byTag)) {
    html += '<h2>' + esc(tag) + '</h2>';
    for (const { path, method, op } of ops) {
      html += '<details id="' + esc(op.operationId) + '"><summary>'
        + '<span class="m ' + method + '">' + method + '</span> <code>' + esc(path) + '</code> — ' + esc(op.summary)
        + (op.security && op.security.length ? ' 🔑' : '') + '</summary>';
      if (op.description) html += '<p>' + esc(op.description) + '</p>';
      if (op.parameters) {
        html += '<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>';
        html += op.parameters.map((p) => '<tr><td><code>' + esc(p.name) + '</code></td><td>' + p.in + '</td>'
          + '<td>' + (p.required ? 'yes' : 'no') + '</td>'
          + '<td>' + esc((p.description ? p.description + ' ' : '') + JSON.stringify(p.schema)) + '</td></tr>').join('');
        html += '</table>';
      }
      if (op.requestBody) for (const [ct, m] of Object.entries(op.requestBody.content)) {
        html += '<h4>Body <code>' + esc(ct) + '</code></h4>' + json(m.schema);
      }
      html += '<h4>Responses</h4>';
      for (const [status, res] of Object.entries(op.responses)) {
        html += '<p><b>' + esc(status) + '</b> ' + esc(res.description) + '</p>';
        for (const [ct, m] of Object.entries(res.content || {})) {
          if (!(m.schema && m.schema.$ref)) html += '<div><code>' + esc(ct) + '</code>' + json(m.schema) + '</div>';
        }
      }
      html += '</details>';
    }
  }
  html += '<h2>Problem</h2><p>Every error is <code>application/problem+json</code>:</p>' + json(doc.components.schemas.Problem);
  document.getElementById('app').innerHTML = html;
}).catch((e) => { document.getElementById('app').textContent = 'Could not load the API description: ' + e; });`;
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Intake API</title>',
    `<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head><body>`,
    '<div id="app">Loading the API description…</div>',
    `<noscript>Enable JavaScript, or read the <a href="${openApiPath}">OpenAPI document</a>.</noscript>`,
    `<script>${script}</script></body></html>`,
  ].join('');
}

export function problemPage(p: ProblemDescription): string {
  const listUrl = p.type.slice(0, p.type.length - p.slug.length - 1);
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(p.title)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<p><a href="${escapeHtml(listUrl)}">All problem types</a></p><h1>${escapeHtml(p.title)}</h1>`,
    `<p>HTTP <b>${p.status}</b> · type <code>${escapeHtml(p.type)}</code></p><p>${escapeHtml(p.description)}</p>`,
    '</body></html>',
  ].join('');
}

export function problemListPage(list: ProblemDescription[]): string {
  const rows = list
    .map(
      (p) =>
        `<tr><td>${p.status}</td>` +
        `<td><a href="${escapeHtml(p.type)}"><code>${escapeHtml(p.slug)}</code></a></td>` +
        `<td>${escapeHtml(p.title)}</td></tr>`,
    )
    .join('');
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Problem types</title><style>${STYLE}</style></head>`,
    '<body><h1>Problem types</h1>',
    '<p>Every error is an RFC 7807 <code>application/problem+json</code> document whose <code>type</code> is one of these.</p>',
    `<table><tr><th>status</th><th>slug</th><th>title</th></tr>${rows}</table></body></html>`,
  ].join('');
}
