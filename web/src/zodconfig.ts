// @ag-ui/client validates events with zod, whose object schemas probe for
// eval (new Function) to compile fast parsers. The studio's CSP forbids
// eval, so the probe would be reported as a violation on every load. This
// module must be imported before @ag-ui/client: schemas read the setting
// when they are defined.
import { config } from 'zod/v4'

config({ jitless: true })
