import type { TFunction } from 'i18next'
import type { KindDescription } from './types'

// A node kind's name and description come from the server in English
// (GET /api/node-kinds); the catalogue (locales/<lang>/kinds.json) says
// them in the user's language, and a kind it does not know yet keeps the
// server's words.

export function kindTitle(t: TFunction, kind: KindDescription | undefined, fallback: string): string {
  if (!kind) return fallback
  return t(`kinds.${kind.kind}.title`, { defaultValue: kind.title })
}

export function kindDescription(t: TFunction, kind: KindDescription): string {
  return t(`kinds.${kind.kind}.description`, { defaultValue: kind.description })
}
