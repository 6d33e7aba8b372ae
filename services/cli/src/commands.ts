import { parseArgs } from 'node:util';
import type { AdminPath } from '@weft/auth';

export class UsageError extends Error {}

export const USAGE = `usage: weft <command> [options]

  migrate                               apply the schema migrations not yet applied, then exit
                                        (run once per deployment; services started with
                                        WEFT_MIGRATE=wait wait for it)
  keys create --user <name> [--entity <entity>]... [--admin] [--name <label>]
                                        create a key (shown once); the user and entities are created when missing
  keys list [--user <name>]             list keys (never the keys themselves)
  keys revoke <key_id>                  revoke a key
  entities create <name>                create an entity (team)
  entities list                         list entities and their members
  entities add-member <entity> <user>   make a user a member of an entity
  entities remove-member <entity> <user>

Where the store is:
  --url <url> (or WEFT_URL)             a running weft server: uses its admin endpoints with
  --api-key <key> (or WEFT_API_KEY)     an admin key. Needed while a server holds an embedded store.
  otherwise                             the store itself, as the server would open it
                                        (CLICKHOUSE_URL, or embedded under WEFT_DATA_DIR).`;

/** `weft migrate`: on the store only (never through a server). */
export interface MigrateCommand {
  kind: 'migrate';
}

export interface Command {
  kind: 'admin';
  path: AdminPath;
  body: Record<string, unknown>;
  url?: string;
  apiKey?: string;
}

/** Turns command-line arguments into one admin operation (the same bodies as the HTTP endpoints). */
export function parseCommand(argv: string[], env: Record<string, string | undefined> = process.env): Command | MigrateCommand {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      entity: { type: 'string', multiple: true },
      admin: { type: 'boolean', default: false },
      name: { type: 'string' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError(USAGE);
  const [group, action, ...rest] = positionals;
  if (group === 'migrate') {
    if (action !== undefined) throw new UsageError(`weft migrate takes no arguments\n\n${USAGE}`);
    return { kind: 'migrate' };
  }
  const common = { url: values.url ?? env.WEFT_URL ?? undefined, apiKey: values['api-key'] ?? env.WEFT_API_KEY ?? undefined };
  const need = (n: number, what: string) => {
    if (rest.length !== n) throw new UsageError(`weft ${group} ${action} takes ${what}\n\n${USAGE}`);
  };
  const cmd = (path: AdminPath, body: Record<string, unknown>): Command => ({ kind: 'admin', path, body, ...common });
  switch (`${group} ${action}`) {
    case 'keys create':
      need(0, 'options only');
      if (!values.user) throw new UsageError(`weft keys create needs --user <name>\n\n${USAGE}`);
      return cmd('/admin/keys/create', { user: values.user, admin: values.admin, entities: values.entity ?? [], name: values.name });
    case 'keys list':
      need(0, 'options only');
      return cmd('/admin/keys/list', values.user ? { user: values.user } : {});
    case 'keys revoke':
      need(1, 'one key id');
      return cmd('/admin/keys/revoke', { key_id: rest[0] });
    case 'entities create':
      need(1, 'one entity name');
      return cmd('/admin/entities/create', { name: rest[0] });
    case 'entities list':
      need(0, 'no arguments');
      return cmd('/admin/entities/list', {});
    case 'entities add-member':
      need(2, '<entity> <user>');
      return cmd('/admin/entities/add_member', { entity: rest[0], user: rest[1] });
    case 'entities remove-member':
      need(2, '<entity> <user>');
      return cmd('/admin/entities/remove_member', { entity: rest[0], user: rest[1] });
    default:
      throw new UsageError(USAGE);
  }
}
