import { describe, expect, it } from 'vitest';
import { exceptionHeadline, exceptionText } from '../app/exception';

describe("a call's exception", () => {
  const sdk = JSON.stringify({
    type: 'ValueError',
    message: 'cannot divide by zero',
    traceback: [
      { filename: 'app.py', line_number: 3, function_name: '<module>', text: 'divide(1, 0)' },
      { filename: 'app.py', line_number: 9, function_name: 'divide', text: null },
    ],
  });

  it("as the Weave SDK stores it (JSON with frames) reads as Python's traceback", () => {
    expect(exceptionText(sdk)).toBe(
      [
        'Traceback (most recent call last):',
        '  File "app.py", line 3, in <module>',
        '    divide(1, 0)',
        '  File "app.py", line 9, in divide',
        'ValueError: cannot divide by zero',
      ].join('\n'),
    );
    expect(exceptionHeadline(sdk)).toBe('ValueError: cannot divide by zero');
    expect(exceptionText(JSON.stringify({ type: 'KeyError', message: "'x'" }))).toBe("KeyError: 'x'");
  });

  it('anything else is shown as it is', () => {
    for (const raw of ['TimeoutError: no answer', 'UNAVAILABLE: upstream down', '{"not": "an exception"}', '{broken'])
      expect(exceptionText(raw)).toBe(raw);
  });
});
