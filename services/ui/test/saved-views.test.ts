import { describe, expect, it } from 'vitest';
import { callsQueryBody, type CallsFilter } from '../app/calls-filter';
import { definitionOf, stateOf, type CallsViewState } from '../app/saved-views';

const P = 'acme/p';
const IDS = ['op', 'name', 'status', 'started', 'latency', 'tokens', 'cost', 'feedback', 'user'];
const COLUMNS = IDS.map((id) => ({ id, label: id.toUpperCase() }));

/** A state saved and read back: the same calls query, the same sort and columns. */
function roundTrip(state: CallsViewState): CallsViewState {
  const def = JSON.parse(JSON.stringify(definitionOf(state, P, COLUMNS)));
  const { state: back, ignored } = stateOf(def, P, IDS);
  expect(ignored).toEqual([]);
  return back;
}
const body = (f: CallsFilter) => callsQueryBody({ ...f, roots: f.roots ?? '0' }, P);

describe('saved views', () => {
  it('give back every filter field, the sort and the hidden columns', () => {
    // (Prefix terms come back first: the query puts them first.)
    const filters: CallsFilter[] = [
      {},
      { op: 'agent', roots: '1' },
      { op: 'grpc*, llm', status: 'error' },
      { op: 'weave:///acme/p/op/agent:*' },
      { op: 'b*, a', q: 'paris', trace: 't-1', thread: 'th', ref: 'weave:///acme/p/object/qa:abc' },
      { status: 'success', from: '2026-01-02T03:04:05', to: '2026-01-03T00:00:00', q: 'x' },
      { expr: '{"$gt":[{"$getField":"inputs.n"},{"$literal":10}]}', status: 'error' },
    ];
    for (const filter of filters) {
      const state: CallsViewState = {
        filter: { roots: '0', ...filter },
        sort: { field: 'summary.weave.latency_ms', direction: 'asc' },
        hidden: ['cost', 'user'],
      };
      const back = roundTrip(state);
      expect(back.filter, JSON.stringify(filter)).toEqual({ roots: '0', ...filter });
      expect(body(back.filter)).toEqual(body(state.filter));
      expect(back.sort).toEqual(state.sort);
      expect(back.hidden).toEqual(['cost', 'user']);
    }
  });

  it('read the free text of a view saved when it searched four fields (attributes and exception not yet among them)', () => {
    const contains = (name: string) => ({
      $contains: { input: { $getField: name }, substr: { $literal: 'paris' }, case_insensitive: true },
    });
    const earlier = { $or: ['inputs', 'output', 'op_name', 'display_name'].map(contains) };
    const { state, ignored } = stateOf({ query: { $expr: earlier } } as never, P, IDS);
    expect(ignored).toEqual([]);
    expect(state.filter.q).toBe('paris');
    expect(state.filter.expr).toBeUndefined();
  });

  it('write what the API is sent, as the Weave SDK reads it', () => {
    const def = definitionOf(
      { filter: { op: 'agent', status: 'error' }, sort: { field: 'started_at', direction: 'desc' }, hidden: ['tokens'] },
      P,
      COLUMNS,
    );
    expect(def.filter).toEqual({ op_names: ['agent', 'weave:///acme/p/op/agent:*'] });
    expect(def.query).toEqual({ $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'error' }] } });
    expect(def.sort_by).toEqual([{ field: 'started_at', direction: 'desc' }]);
    expect(def.columns?.map((c) => c.path?.join('.'))).toEqual([
      'op_name',
      'display_name',
      'summary.weave.status',
      'started_at',
      'summary.weave.latency_ms',
      'summary.weave.total_cost',
      'feedback',
      'wb_user_id',
    ]);
    // Browsing (no filter): roots only, said explicitly.
    expect(definitionOf({ filter: {}, sort: { field: 'started_at', direction: 'desc' }, hidden: [] }, P, COLUMNS).filter).toEqual({
      trace_roots_only: true,
    });
  });

  it('open a view the Weave SDK saved (its serialised pydantic fields, its own filters)', () => {
    const sdk = {
      _type: 'SavedViewDefinition',
      filter: {
        _type: 'CallsFilter',
        op_names: ['weave:///acme/p/op/agent:*'],
        call_ids: null,
        trace_roots_only: null,
        wb_user_ids: ['u1'],
      },
      query: {
        $expr: {
          $and: [
            {
              $eq: [
                { $getField: 'summary.weave.status', _type: 'GetFieldOperator' },
                { $literal: 'error', _type: 'LiteralOperation' },
              ],
            },
            { $gt: [{ $getField: 'inputs.n' }, { $literal: 3 }] },
          ],
        },
      },
      sort_by: [{ field: 'started_at', direction: 'asc' }],
      columns: null,
      cols: { 'summary.weave.status': false },
    };
    const { state, ignored } = stateOf(sdk, P, IDS);
    expect(state.filter).toEqual({
      op: 'weave:///acme/p/op/agent:*',
      roots: '0',
      status: 'error',
      expr: '{"$gt":[{"$getField":"inputs.n"},{"$literal":3}]}',
    });
    expect(state.sort).toEqual({ field: 'started_at', direction: 'asc' });
    expect(state.hidden).toEqual(['status']);
    expect(ignored).toEqual(['filter.wb_user_ids']);
  });
});
