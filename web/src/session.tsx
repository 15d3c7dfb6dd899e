import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react'
import { allows, api, APIError, currentWorkspace, setCSRFToken, setUnauthorizedHandler, setWorkspace, type Me, type Permission, type User, type Workspace } from './api'

interface Session {
  /** me is the signed-in user and their workspaces; null when signed out, undefined while loading. */
  me: Me | null | undefined
  workspace: string | null
  chooseWorkspace: (id: string) => void
  signIn: (email: string, password: string) => Promise<void>
  signOut: () => Promise<void>
  refresh: () => Promise<void>
}

const SessionContext = createContext<Session | null>(null)

export function useSession(): Session {
  const s = useContext(SessionContext)
  if (!s) throw new Error('useSession outside SessionProvider')
  return s
}

/** useWorkspace is the workspace the signed-in user works in now, with their role and permissions there. */
export function useWorkspace(): Workspace | undefined {
  const { me, workspace } = useSession()
  return me?.workspaces.find((w) => w.id === workspace)
}

/** useCan reports whether the user's role in the current workspace has p, so pages hide what would be refused. */
export function useCan(p: Permission): boolean {
  return allows(useWorkspace(), p)
}

function pickWorkspace(me: Me): string | null {
  const saved = currentWorkspace()
  if (saved && me.workspaces.some((w) => w.id === saved)) return saved
  return me.workspaces[0]?.id ?? null
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const [workspace, setWs] = useState<string | null>(currentWorkspace())

  const signedOut = useCallback(() => {
    setCSRFToken(null)
    setMe(null)
  }, [])

  const refresh = useCallback(async () => {
    try {
      let m: Me
      try {
        m = await api<Me>('/api/me')
      } catch (e) {
        // A saved workspace the user has left is refused: ask again without it.
        if (e instanceof APIError && e.status !== 401 && currentWorkspace()) {
          setWorkspace(null)
          m = await api<Me>('/api/me')
        } else throw e
      }
      const ws = pickWorkspace(m)
      setWorkspace(ws)
      setWs(ws)
      setMe(m)
    } catch {
      setMe(null)
    }
  }, [])

  useEffect(() => {
    setUnauthorizedHandler(signedOut)
    void refresh()
  }, [refresh, signedOut])

  const signIn = useCallback(
    async (email: string, password: string) => {
      const r = await api<{ csrf_token: string; user: User }>('/api/auth/login', 'POST', { email, password })
      setCSRFToken(r.csrf_token)
      await refresh()
    },
    [refresh],
  )

  const signOut = useCallback(async () => {
    try {
      await api('/api/auth/logout', 'POST')
    } finally {
      signedOut()
    }
  }, [signedOut])

  const chooseWorkspace = useCallback((id: string) => {
    setWorkspace(id)
    setWs(id)
  }, [])

  return (
    <SessionContext.Provider value={{ me, workspace, chooseWorkspace, signIn, signOut, refresh }}>
      {children}
    </SessionContext.Provider>
  )
}
