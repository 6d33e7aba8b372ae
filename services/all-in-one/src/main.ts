import { runWeft } from '@weft/runtime';
import { rolesFromConfig } from './app';

/** `npm start`: the whole service in one process on PORT (default 6345), or the roles WEFT_ROLES names. */
runWeft('all-in-one', rolesFromConfig);
