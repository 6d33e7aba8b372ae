/**
 * Bound query parameters. Every user value reaches SQL as `{pN:Type}` with the value sent
 * separately (ClickHouse server-side binding), never spliced into the SQL text.
 */
export class Params {
  readonly values: Record<string, unknown> = {};
  private n = 0;

  add(value: unknown, type: string): string {
    const name = `p${this.n++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }

  str(value: string): string {
    return this.add(value, 'String');
  }

  strArray(values: readonly string[]): string {
    return this.add(values, 'Array(String)');
  }

  int(value: number): string {
    return this.add(value, 'Int64');
  }

  /** A copy to extend (e.g. per page) without touching the original's bindings. */
  clone(): Params {
    const c = new Params();
    Object.assign(c.values, this.values);
    c.n = this.n;
    return c;
  }
}

export interface BuiltQuery {
  sql: string;
  params: Record<string, unknown>;
}
