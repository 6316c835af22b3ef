/**
 * The token view of one rollout: its token ids, sampling log-probs and loss mask exactly as
 * `ng-export +format=rl` writes them (the server builds them with the exporter's own code).
 */
import { api, el, fmt } from './dom.js';

interface TokensAnswer {
  index: number;
  error?: string;
  input_ids?: number[];
  loss_mask?: number[];
  logprobs?: number[];
  prompt_length?: number;
  turns?: number;
}

/** Tokens shown at first; the rest on request (a long rollout has tens of thousands). */
const FIRST = 1500;

function chips(t: Required<Pick<TokensAnswer, 'input_ids' | 'loss_mask' | 'logprobs'>>, from: number, to: number): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (let i = from; i < to; i++) {
    const mask = t.loss_mask[i]!;
    const lp = t.logprobs[i]!;
    out.push(el('span', {
      className: 'tok m' + mask, 'data-pos': String(i),
      title: 'position ' + i + ' · token id ' + t.input_ids[i] + ' · log-prob ' + lp + ' · loss mask ' + mask,
    }, [el('b', { text: String(t.input_ids[i]) }), el('small', { text: mask ? fmt(lp) : '·' })]));
  }
  return out;
}

function render(box: HTMLElement, t: TokensAnswer): void {
  if (t.error !== undefined || !t.input_ids || !t.loss_mask || !t.logprobs) {
    box.replaceChildren(el('p', { className: 'muted', text: 'No token view: ' + (t.error ?? 'no token ids') + '. ng-export +format=rl would skip this rollout.' }));
    return;
  }
  const seq = { input_ids: t.input_ids, loss_mask: t.loss_mask, logprobs: t.logprobs };
  const n = seq.input_ids.length;
  const trained = seq.loss_mask.reduce((a, m) => a + m, 0);
  let lpSum = 0;
  for (let i = 0; i < n; i++) if (seq.loss_mask[i]) lpSum += seq.logprobs[i]!;
  const summary = el('p', { className: 'token-summary', text:
    n + ' tokens · prompt_length ' + t.prompt_length + ' · ' + trained + ' with loss mask 1 · ' + t.turns + ' turn' + (t.turns === 1 ? '' : 's') +
    ' · mean log-prob of generated tokens ' + (trained ? fmt(lpSum / trained) : '–') });
  const legend = el('p', { className: 'token-legend muted' }, [
    el('span', { className: 'tok m1' }, [el('b', { text: 'id' }), el('small', { text: 'log-prob' })]), document.createTextNode(' generated (loss mask 1)  '),
    el('span', { className: 'tok m0' }, [el('b', { text: 'id' }), el('small', { text: '·' })]), document.createTextNode(' prompt, tool output (loss mask 0, log-prob 0)'),
  ]);
  const list = el('div', { className: 'tokens', role: 'list' }, chips(seq, 0, Math.min(n, FIRST)));
  box.replaceChildren(summary, legend, list);
  if (n > FIRST) {
    const more = el('button', { type: 'button', className: 'more-tokens', text: 'Show all ' + n + ' tokens' });
    more.addEventListener('click', () => { list.append(...chips(seq, FIRST, n)); more.remove(); });
    box.appendChild(more);
  }
  const raw = el('details', { className: 'json' }, [el('summary', { text: 'As exported (input_ids, loss_mask, logprobs)' }),
    el('pre', { text: JSON.stringify({ input_ids: seq.input_ids, loss_mask: seq.loss_mask, logprobs: seq.logprobs }) })]);
  box.appendChild(raw);
}

/** A collapsed block that loads the rollout's tokens when opened. */
export function tokenBlock(file: string, index: number, id: string): HTMLDetailsElement {
  const body = el('div', { className: 'token-view' });
  const d = el('details', { className: 'json tokens-box', id }, [el('summary', { text: 'Tokens (ids, log-probs, loss mask as ng-export +format=rl writes them)' }), body]);
  let loaded = false;
  d.addEventListener('toggle', async () => {
    if (!d.open || loaded) return;
    loaded = true;
    body.replaceChildren(el('p', { className: 'muted', text: 'Loading tokens…' }));
    try { render(body, await api<TokensAnswer>('/api/rows/' + index + '/tokens?file=' + file)); }
    catch (e) { body.replaceChildren(el('p', { className: 'error', text: 'Error: ' + (e as Error).message })); }
    d.setAttribute('data-loaded', '1');
  });
  return d;
}
