import { isInteger, parse as losslessParse } from 'lossless-json';

/**
 * Parses an OTLP/JSON body. Nanosecond times and int64 attributes beyond 2^53 are sometimes
 * sent as bare JSON numbers, which JSON.parse would round: when the text holds such a long
 * number literal, lossless-json parses it and big integers arrive as bigint. Plain JSON.parse
 * (much faster) otherwise.
 */
const LONG_NUMBER = /[:[,]\s*-?\d{16,}/;

const parseNumber = (s: string): number | bigint => {
  const n = Number(s);
  return Number.isSafeInteger(n) || !isInteger(s) ? n : BigInt(s);
};

export function parseOtlpJson(text: string): unknown {
  return LONG_NUMBER.test(text) ? losslessParse(text, null, parseNumber) : JSON.parse(text);
}
