import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { createEventVerifier, type EventVerifier, type NostrEvent } from '../../nostr/event.ts';
import { checkZapReceipt, invoiceFacts, NO_PROVIDER_LOOKUP, type ZapProviderLookup } from './zap-receipt.ts';

/**
 * BOLT-11's own example "Please send $3 for a cup of coffee to the same peer, within one minute":
 * 2500 µBTC, that is 250,000 sats (payment secret form of the current spec).
 */
const SPEC_INVOICE_2500U =
  'lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu9qrsgquk0rl77nj30yxdy8j9vdx85fkpmdla2087ne0xh8nhedh8w27kyke0lp53ut353s06fv3qfegext0eh0ymjpf39tuven09sam30g4vgpfna3rh';
const SPEC_SATS = 250_000n;

const payerKey = generateSecretKey();
const providerKey = generateSecretKey();
const RECIPIENT = 'c'.repeat(64);
const OTHER = 'd'.repeat(64);
const NOTE = '1'.repeat(64);
const PAYER = getPublicKey(payerKey);
const PROVIDER = getPublicKey(providerKey);

function zapRequest(tags: string[][], key = payerKey): NostrEvent {
  return finalizeEvent(
    { kind: 9734, created_at: 1_712_345_600, content: 'great post', tags: [['relays', 'wss://r.example'], ...tags] },
    key,
  );
}

function receipt(options: { description?: string; p?: string; bolt11?: string; key?: Uint8Array }): NostrEvent {
  const tags: string[][] = [
    ['p', options.p ?? RECIPIENT],
    ['e', NOTE],
    ['bolt11', options.bolt11 ?? SPEC_INVOICE_2500U],
  ];
  if (options.description !== undefined) tags.push(['description', options.description]);
  return finalizeEvent({ kind: 9735, created_at: 1_712_345_678, content: '', tags }, options.key ?? providerKey);
}

const knownProvider: ZapProviderLookup = (recipient) => Promise.resolve(recipient === RECIPIENT ? PROVIDER : null);

let verifier: EventVerifier;
before(async () => {
  verifier = await createEventVerifier();
});

describe('checkZapReceipt', () => {
  test('a valid receipt from the known provider: verified, from the payer, with the invoice amount', async () => {
    const request = zapRequest([
      ['p', RECIPIENT],
      ['e', NOTE],
      ['amount', '250000000'],
    ]);
    const checked = await checkZapReceipt(receipt({ description: JSON.stringify(request) }), verifier, knownProvider);
    assert.ok(checked.ok);
    assert.equal(checked.recipient, RECIPIENT);
    assert.equal(checked.sender, PAYER);
    assert.equal(checked.sats, SPEC_SATS);
    assert.equal(checked.verified, true);
    assert.equal(checked.anonymous, false);
  });

  test('an unknown provider leaves the zap unverified, otherwise valid', async () => {
    const request = zapRequest([['p', RECIPIENT]]);
    const checked = await checkZapReceipt(receipt({ description: JSON.stringify(request) }), verifier, NO_PROVIDER_LOOKUP);
    assert.ok(checked.ok);
    assert.equal(checked.verified, false);
    assert.equal(checked.sats, SPEC_SATS);
  });

  test('a receipt signed by someone else than the known provider is refused', async () => {
    const request = zapRequest([['p', RECIPIENT]]);
    const forged = receipt({ description: JSON.stringify(request), key: generateSecretKey() });
    assert.deepEqual(await checkZapReceipt(forged, verifier, knownProvider), { ok: false, reason: 'wrong_provider' });
  });

  test("a request for another user than the receipt's p is refused", async () => {
    const request = zapRequest([['p', OTHER]]);
    assert.deepEqual(await checkZapReceipt(receipt({ description: JSON.stringify(request) }), verifier, knownProvider), {
      ok: false,
      reason: 'wrong_recipient',
    });
    const twoRecipients = zapRequest([
      ['p', RECIPIENT],
      ['p', OTHER],
    ]);
    assert.deepEqual(await checkZapReceipt(receipt({ description: JSON.stringify(twoRecipients) }), verifier, knownProvider), {
      ok: false,
      reason: 'wrong_recipient',
    });
  });

  test('a missing, unparsable or non-9734 description is refused', async () => {
    for (const description of [
      undefined,
      'not json',
      '{}',
      JSON.stringify(finalizeEvent({ kind: 1, created_at: 1, content: '', tags: [['p', RECIPIENT]] }, payerKey)),
    ]) {
      assert.deepEqual(await checkZapReceipt(receipt(description === undefined ? {} : { description }), verifier, knownProvider), {
        ok: false,
        reason: 'bad_description',
      });
    }
  });

  test('a request whose signature does not verify is refused', async () => {
    const request = zapRequest([['p', RECIPIENT]]);
    const tampered = { ...request, content: 'changed after signing' };
    assert.deepEqual(await checkZapReceipt(receipt({ description: JSON.stringify(tampered) }), verifier, knownProvider), {
      ok: false,
      reason: 'bad_request_signature',
    });
  });

  test('an undecodable invoice, or one for another amount than requested, is refused', async () => {
    const description = JSON.stringify(zapRequest([['p', RECIPIENT]]));
    const corrupted = SPEC_INVOICE_2500U.slice(0, -1) + (SPEC_INVOICE_2500U.endsWith('h') ? 'q' : 'h');
    assert.deepEqual(await checkZapReceipt(receipt({ description, bolt11: corrupted }), verifier, knownProvider), {
      ok: false,
      reason: 'bad_invoice',
    });
    const askedLess = JSON.stringify(
      zapRequest([
        ['p', RECIPIENT],
        ['amount', '1000'],
      ]),
    );
    assert.deepEqual(await checkZapReceipt(receipt({ description: askedLess }), verifier, knownProvider), {
      ok: false,
      reason: 'amount_mismatch',
    });
  });

  test('an anon tag makes the zap anonymous', async () => {
    const request = zapRequest([['p', RECIPIENT], ['anon']], generateSecretKey());
    const checked = await checkZapReceipt(receipt({ description: JSON.stringify(request) }), verifier, knownProvider);
    assert.ok(checked.ok);
    assert.equal(checked.anonymous, true);
  });

  test('a receipt without a valid p, or of another kind, is refused', async () => {
    const description = JSON.stringify(zapRequest([['p', RECIPIENT]]));
    assert.deepEqual(await checkZapReceipt(receipt({ description, p: 'nope' }), verifier, knownProvider), {
      ok: false,
      reason: 'no_recipient',
    });
    const note = { ...receipt({ description }), kind: 1 };
    assert.deepEqual(await checkZapReceipt(note, verifier, knownProvider), { ok: false, reason: 'not_a_receipt' });
  });
});

test('invoiceFacts: the amount of a BOLT-11 example in millisats; none for an amountless invoice', () => {
  assert.deepEqual(invoiceFacts(SPEC_INVOICE_2500U), { msat: 250_000_000n });
  const donation =
    'lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlqnls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql';
  assert.equal(invoiceFacts(donation), null);
  assert.equal(invoiceFacts('not an invoice'), null);
});
