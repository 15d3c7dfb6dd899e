// Actors ("user:<id>", "apikey:<id>", "system") named for people: a
// workspace member's actor reads as their e-mail address. The Audit and
// Usage pages both show actors.
import { api } from '../api'
import { useLoad } from '../components/ui'
import { workspacePath, type Member } from '../settings/api'

/** ActorNames maps an actor to what a person recognises, and an e-mail back to its actor. */
export interface ActorNames {
  name: (actor: string) => string | undefined
  /** emails are the members' addresses, each with its actor. */
  emails: { email: string; actor: string }[]
  /** actorOf reads what someone typed (an e-mail of a member or an actor) as an actor. */
  actorOf: (typed: string) => string
}

/** useActorNames loads the workspace's members once per workspace. */
export function useActorNames(workspace: string | null): ActorNames {
  const members = useLoad(
    () =>
      workspace
        ? api<{ members: Member[] | null }>(workspacePath(workspace) + '/members').then((r) => r.members ?? [])
        : Promise.resolve([] as Member[]),
    [workspace],
  )
  const byActor = new Map<string, string>()
  const emails: { email: string; actor: string }[] = []
  for (const m of members.data ?? []) {
    const actor = 'user:' + m.user_id
    const label = m.display_name || m.email
    if (label) byActor.set(actor, label)
    if (m.email) emails.push({ email: m.email, actor })
  }
  return {
    name: (actor) => byActor.get(actor),
    emails,
    actorOf: (typed) => {
      const s = typed.trim()
      return emails.find((e) => e.email.toLowerCase() === s.toLowerCase())?.actor ?? s
    },
  }
}
