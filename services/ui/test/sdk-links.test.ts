import { describe, expect, it } from 'vitest';
import { hashForSdkPath } from '../app/sdk-links';

// The shapes of weave/trace/urls.py (Weave SDK 0.54), on weft's own base URL.
describe('links the Weave SDK prints', () => {
  it('open their views', () => {
    expect(hashForSdkPath('/acme/p/weave')).toBe('#/p/acme/p/calls');
    expect(hashForSdkPath('/acme/p/weave/')).toBe('#/p/acme/p/calls');
    expect(hashForSdkPath('/acme/p/r/call/0199-a')).toBe('#/p/acme/p/call/0199-a');
    expect(hashForSdkPath('/acme/p/weave/r/call/0199-a')).toBe('#/p/acme/p/call/0199-a');
    expect(hashForSdkPath('/acme/p/weave/calls/0199-a')).toBe('#/p/acme/p/call/0199-a');
    expect(hashForSdkPath('/acme/p/weave/objects/my%20data/versions/abc')).toBe('#/p/acme/p/objects/my%20data?v=abc');
    expect(hashForSdkPath('/acme/p/weave/ops/agent/versions/abc')).toBe('#/p/acme/p/objects/agent?v=abc');
    expect(hashForSdkPath('/acme/p/weave/objects/qa')).toBe('#/p/acme/p/objects/qa');
    expect(hashForSdkPath('/acme/p/weave/leaderboards/board')).toBe('#/p/acme/p/leaderboards/board');
    expect(hashForSdkPath('/acme/p/weave/agents/conversations/c%201')).toBe('#/p/acme/p/threads/c%201');
    expect(hashForSdkPath('/acme/p/weave/somewhere/else')).toBe('#/p/acme/p/calls');
    // SavedView.ui_url(): the calls as the saved view shows them.
    expect(hashForSdkPath('/acme/p/weave/traces', '?view=traces_2026-01-01_12-00-00-000')).toBe(
      '#/p/acme/p/calls?view=traces_2026-01-01_12-00-00-000',
    );
    expect(hashForSdkPath('/acme/p/weave/traces')).toBe('#/p/acme/p/calls');
  });

  it('anything else is not such a link', () => {
    expect(hashForSdkPath('/')).toBeNull();
    expect(hashForSdkPath('/acme')).toBeNull();
    expect(hashForSdkPath('/acme/p')).toBeNull();
    expect(hashForSdkPath('/acme/p/calls')).toBeNull();
  });
});
