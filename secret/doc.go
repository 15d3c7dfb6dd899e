// Package secret protects the credentials AgentCraft holds: provider API
// keys at rest (Box), the master key that seals them (LoadMasterKey), and
// secrets in memory (Secret, which never prints).
//
// # Sealing
//
// A Box seals with AES-256-GCM in an envelope: every Seal draws a fresh
// 256-bit data key, encrypts the plaintext with it, and wraps the data key
// with a key-encryption key derived (HKDF-SHA-256) from the master key.
// Compared with encrypting directly under the master key this
//
//   - spends the master key's random-nonce budget (about 2^32 messages per
//     AES-GCM key) only on 32-byte key wraps, never on bulk data;
//   - lets the master key move into a KMS later, which then only ever sees
//     data keys, and lets a rotation rewrap keys without touching data;
//   - keeps the derived keys apart from any other use of the master key.
//
// The caller's associated data (use Bind, as Bind(workspaceID, provider))
// is authenticated with the ciphertext, so a sealed credential copied to
// another workspace or provider row does not open. Each sealed value
// carries the KeyID of the master key that sealed it; store it next to the
// ciphertext (store.Credential.KeyID) so a future rotation can find the rows
// to reseal. Today a Box holds one key; Open of a value sealed under another
// gives ErrUnknownKey.
//
// Sealed format, version 1:
//
//	1 byte   version (1)
//	1 byte   n, length of the key id
//	n bytes  key id (ASCII)
//	60 bytes wrapped data key: nonce(12) ‖ AES-GCM(kek, data key, ad=header)
//	rest     nonce(12) ‖ AES-GCM(data key, plaintext, ad=header ‖ associated data)
//
// where header is the first 2+n bytes.
//
// # Master key
//
// LoadMasterKey takes the key from AGENTCRAFT_MASTER_KEY (64 hex or 44
// base64 characters) or from a key file, which it creates with a random key
// on first start (mode 0600, directory 0700). It refuses a key file that
// group or others can read, as ssh refuses such a private key: that key
// opens every stored credential, and a warning in a log nobody reads would
// leave it exposed. The fix is in the error (chmod 600).
package secret
