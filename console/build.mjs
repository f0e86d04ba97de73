/* global console */
// Builds the web console into console/dist: hashed JS and CSS under assets/, and index.html that loads them
// (management serves that directory at /console).
// Fails when the JS the browser loads grows past its budget (64 KB gzipped).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, 'dist');
const BUDGET_GZIP_BYTES = 64 * 1024;

rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'assets'), { recursive: true });

const result = await build({
  entryPoints: [path.join(here, 'src/main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((p) => path.basename(p));
const js = outputs.find((f) => f.endsWith('.js'));
const css = outputs.find((f) => f.endsWith('.css'));
if (!js || !css) throw new Error(`console build: missing outputs (${outputs.join(', ')})`);

const iconSource = readFileSync(path.join(here, 'icon.svg'));
const icon = `icon-${createHash('sha256').update(iconSource).digest('hex').slice(0, 8).toUpperCase()}.svg`;
writeFileSync(path.join(out, 'assets', icon), iconSource);

const gzipped = gzipSync(readFileSync(path.join(out, 'assets', js))).length;
if (gzipped > BUDGET_GZIP_BYTES) throw new Error(`console JS is ${gzipped} bytes gzipped, over ${BUDGET_GZIP_BYTES}`);

writeFileSync(
  path.join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Intake console</title>
<link rel="icon" href="/console/assets/${icon}" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/${css}">
<script type="module" src="/console/assets/${js}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading the Intake console…</p></div>
<noscript>The Intake console needs JavaScript.</noscript>
</body>
</html>
`,
);
writeFileSync(path.join(out, 'build.json'), JSON.stringify({ js, css, js_gzip_bytes: gzipped }, null, 2) + '\n');
console.log(`console: ${js} (${(gzipped / 1024).toFixed(1)} KB gzipped), ${css}`);
