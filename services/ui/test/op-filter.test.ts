import { describe, expect, it } from 'vitest';
import { opCondition } from '../app/op-filter';

const P = 'acme/p';
const range = (from: string, to: string) => ({
  $and: [{ $gte: [{ $getField: 'op_name' }, { $literal: from }] }, { $lt: [{ $getField: 'op_name' }, { $literal: to }] }],
});

describe('the Op filter', () => {
  it('a name is that plain op name or any version of the project op ref of that name', () => {
    expect(opCondition('agent', P)).toEqual({ op_names: ['agent', 'weave:///acme/p/op/agent:*'] });
    expect(opCondition(' agent:* ', P)).toEqual({ op_names: ['agent', 'weave:///acme/p/op/agent:*'] });
    expect(opCondition('a, b', P)).toEqual({ op_names: ['a', 'weave:///acme/p/op/a:*', 'b', 'weave:///acme/p/op/b:*'] });
  });

  it('a full ref stays as it is, as the interface takes it', () => {
    expect(opCondition('weave:///acme/p/op/agent:abc', P)).toEqual({ op_names: ['weave:///acme/p/op/agent:abc'] });
    expect(opCondition('weave:///acme/p/op/agent:*', P)).toEqual({ op_names: ['weave:///acme/p/op/agent:*'] });
  });

  it('name* is a prefix range on plain names and on the names of op refs', () => {
    expect(opCondition('grpc*', P)).toEqual({
      expr: { $or: [range('grpc', 'grpd'), range('weave:///acme/p/op/grpc', 'weave:///acme/p/op/grpd')] },
    });
  });

  it('mixing prefixes and names puts every term in one $or', () => {
    expect(opCondition('grpc*, llm', P)).toEqual({
      expr: {
        $or: [
          range('grpc', 'grpd'),
          range('weave:///acme/p/op/grpc', 'weave:///acme/p/op/grpd'),
          range('weave:///acme/p/op/llm:', 'weave:///acme/p/op/llm;'),
          { $in: [{ $getField: 'op_name' }, [{ $literal: 'llm' }]] },
        ],
      },
    });
  });

  it('a prefix ending in a character beyond the BMP steps to the next code point', () => {
    const c = opCondition('x😀*', P).expr as { $or: { $and: { $lt: [unknown, { $literal: string }] }[] }[] };
    expect(c.$or[0]!.$and[1]!.$lt[1].$literal).toBe('x😁');
  });

  it('* alone, or nothing, is no condition', () => {
    expect(opCondition('*', P)).toEqual({});
    expect(opCondition(' , ', P)).toEqual({});
  });
});
