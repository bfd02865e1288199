/**
 * Server-rendered pages. Every interpolated value is escaped by hono's `html`
 * tag. Live parts (uploads, sellers, pool) are filled in by assets/console.js
 * from the JSON embedded here and then from the SSE stream; no inline script
 * or style runs (the CSP forbids them).
 */
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { STRINGS, type Lang, type Strings } from './i18n.js';

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** JSON safe inside <script type="application/json">: no "</script>" can close it. */
function jsonBlock(id: string, value: unknown): Html {
  const text = JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  return html`<script type="application/json" id="${id}">${raw(text)}</script>`;
}

function layout(lang: Lang, title: string, body: Html, data: { page: string; token?: string; seller?: string }, initial: unknown): Html {
  const t = STRINGS[lang];
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="/assets/console.css">
</head>
<body data-page="${data.page}" data-lang="${lang}"${data.token ? html` data-token="${data.token}"` : ''}${data.seller ? html` data-seller="${data.seller}"` : ''}>
<header class="top">
  <h1>${title}</h1>
  <div class="top-right">
    ${data.seller ? html`<span class="who">${t.seller} <strong>${data.seller}</strong></span>` : ''}
    <span class="live" data-test="live" data-live="0">${t.offline}</span>
    <nav class="lang" aria-label="${t.language}">
      <a href="?lang=ko" data-test="lang-ko"${lang === 'ko' ? raw(' aria-current="true"') : ''}>한국어</a>
      <a href="?lang=en" data-test="lang-en"${lang === 'en' ? raw(' aria-current="true"') : ''}>English</a>
    </nav>
  </div>
</header>
<p class="api-down" data-test="api" data-available="1" hidden></p>
<p class="api-down" data-test="stale" role="status" hidden></p>
<main>
${body}
</main>
${jsonBlock('strings', t)}
${jsonBlock('initial', initial)}
<script type="module" src="/assets/console.js"></script>
<noscript>${lang === 'ko' ? '실시간 진행 상황을 보려면 JavaScript가 필요합니다.' : 'JavaScript is needed for live progress.'}</noscript>
</body>
</html>`;
}

function uploadForm(t: Strings, withSeller: boolean): Html {
  return html`<form class="send" data-test="upload-form" novalidate>
  ${withSeller ? html`<label class="field">${t.sellerFor} <input name="seller" data-test="seller-input" autocomplete="off" pattern="[A-Za-z0-9_-]{1,64}"></label>` : ''}
  <label class="drop" data-test="drop">
    <input type="file" name="file" accept=".xlsx,.csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" data-test="file">
    <span class="drop-text">${t.drop}</span>
    <span class="file-name" data-test="file-name"></span>
  </label>
  <div class="actions">
    <button type="button" class="secondary" data-test="check">${t.check}</button>
    <button type="button" data-test="register">${t.register}</button>
  </div>
  <div class="result" data-test="result" role="status" aria-live="polite"></div>
  <ol class="errors" data-test="errors" hidden></ol>
</form>`;
}

export function sellerPage(lang: Lang, token: string, sellerId: string, initial: unknown): Html {
  const t = STRINGS[lang];
  const body = html`<section class="card">
  <h2>${t.templateHead}</h2>
  <p>${t.templateText}</p>
  <p class="buttons">
    <a class="button secondary" href="/api/template?lang=ko" download data-test="template-ko">${t.templateKo}</a>
    <a class="button secondary" href="/api/template?lang=en" download data-test="template-en">${t.templateEn}</a>
  </p>
</section>
<section class="card">
  <h2>${t.sendHead}</h2>
  ${uploadForm(t, false)}
</section>
<section class="card">
  <h2>${t.progressHead}</h2>
  <p class="error" data-test="seller-paused" hidden></p>
  <div class="uploads" data-test="uploads"><p class="empty">${t.noUploads}</p></div>
</section>`;
  return layout(lang, t.title, body, { page: 'seller', token, seller: sellerId }, initial);
}

export function operatorPage(lang: Lang, initial: unknown): Html {
  const t = STRINGS[lang];
  const body = html`<section class="card summary">
  <div class="pool" data-test="pool"><h2>${t.pool}</h2><p class="pool-figures"></p><p class="steer" data-test="steer-all"></p></div>
  <div class="failures"><h2>${t.failuresHead}</h2><ul data-test="failures"></ul></div>
</section>
<details class="card">
  <summary><h2>${t.uploadFor}</h2></summary>
  ${uploadForm(t, true)}
</details>
<section class="card">
  <div class="sellers-head">
    <h2>${t.sellersHead}</h2>
    <input type="search" class="filter" data-test="filter" placeholder="${t.filter}" aria-label="${t.filter}">
  </div>
  <p class="count" data-test="seller-count"></p>
  <div class="sellers" data-test="sellers"></div>
</section>`;
  return layout(lang, t.opsTitle, body, { page: 'ops' }, initial);
}

/** A page that says one sentence and shows no data (403, 401). */
export function messagePage(lang: Lang, sentence: string): Html {
  const t = STRINGS[lang];
  return html`<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${t.title}</title><link rel="stylesheet" href="/assets/console.css"></head>
<body><main><section class="card message" data-test="message"><p>${sentence}</p></section></main></body></html>`;
}
