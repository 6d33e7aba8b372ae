import { describe, expect, it } from 'vitest';
import { redactCallPart, redactJsonText, redactText, traceFraction, traceKept } from '@weft/ingest';

describe('redaction (pii-v1)', () => {
  it('replaces what each recognizer finds by its entity, as the Weave SDK writes it', () => {
    expect(redactText('write to alice.smith+work@example.co.uk today')).toBe('write to <EMAIL_ADDRESS> today');
    expect(redactText('call +1 415-555-0132 or (415) 555-0199 or 415.555.0100')).toBe(
      'call <PHONE_NUMBER> or <PHONE_NUMBER> or <PHONE_NUMBER>',
    );
    expect(redactText('+44 20 7946 0958')).toBe('<PHONE_NUMBER>');
    expect(redactText('visa 4111 1111 1111 1111, amex 378282246310005')).toBe('visa <CREDIT_CARD>, amex <CREDIT_CARD>');
    expect(redactText('ssn 123-45-6789')).toBe('ssn <US_SSN>');
    expect(redactText('iban GB82 WEST 1234 5698 7654 32')).toBe('iban <IBAN_CODE>');
    expect(redactText('from 192.168.1.20')).toBe('from <IP_ADDRESS>');
  });

  it('leaves alone what only looks alike: ids, timestamps, dates, versions, failed checksums', () => {
    for (const text of [
      'trace 0199dddd-0000-7000-8000-000000000001',
      'at 1717200000 or 1717200000123 ms',
      'on 2024-06-01 at 12:30:00',
      'card 4111 1111 1111 1112',
      'ssn 000-12-3456',
      'iban GB82 WEST 1234 5698 7654 33',
      'order 4155550132',
      'weave:///acme/p/op/f:0123456789abcdef',
      '@weave.op',
    ])
      expect(redactText(text), text).toBe(text);
  });

  it('redacts the string values of a JSON text, never its keys, and leaves it valid JSON', () => {
    const json = JSON.stringify({
      'bob@example.com': 'bob@example.com',
      note: 'line\nalice@example.com\t',
      n: 4111111111111111,
      list: ['x@y.io'],
    });
    const out = redactJsonText(json);
    expect(JSON.parse(out)).toEqual({
      'bob@example.com': '<EMAIL_ADDRESS>',
      note: 'line\n<EMAIL_ADDRESS>\t',
      n: 4111111111111111,
      list: ['<EMAIL_ADDRESS>'],
    });
    expect(redactJsonText('{"a":"nothing here"}')).toBe('{"a":"nothing here"}');
  });

  it('redacts a part: inputs, output, attributes, the OTel dump and the exception; refs and ids kept', () => {
    const part = redactCallPart({
      project_id: 'p/q',
      id: 'c',
      inputs_dump: '{"q":"mail a@b.com"}',
      output_dump: '"ok a@b.com"',
      attributes_dump: '{"user":"a@b.com"}',
      otel_dump: '{"attributes":{"user.email":"a@b.com"}}',
      exception: 'ValueError: bad address a@b.com',
      input_refs: ['weave:///p/q/object/o:abc'],
      output_refs: [],
      created_at: '2026-01-01 00:00:00.000000',
    });
    expect(part).toMatchObject({
      inputs_dump: '{"q":"mail <EMAIL_ADDRESS>"}',
      output_dump: '"ok <EMAIL_ADDRESS>"',
      attributes_dump: '{"user":"<EMAIL_ADDRESS>"}',
      otel_dump: '{"attributes":{"user.email":"<EMAIL_ADDRESS>"}}',
      exception: 'ValueError: bad address <EMAIL_ADDRESS>',
      input_refs: ['weave:///p/q/object/o:abc'],
    });
  });
});

describe('sampling by trace id', () => {
  it('keeps about the rate, the same trace the same way every time', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `0199dddd-0000-7000-8000-${String(i).padStart(12, '0')}`);
    const kept = ids.filter((t) => traceKept(t, 0.25)).length / ids.length;
    expect(kept).toBeGreaterThan(0.23);
    expect(kept).toBeLessThan(0.27);
    expect(ids.map((t) => traceKept(t, 0.25))).toEqual(ids.map((t) => traceFraction(t) < 0.25));
    expect(ids.every((t) => traceKept(t, 1))).toBe(true);
    expect(ids.some((t) => traceKept(t, 0))).toBe(false);
  });
});
