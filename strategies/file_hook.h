// security_file_permission for a read or write on an open file, from the LSM hook down to
// avc_has_perm, as v2.6.22 ran it (security/selinux/hooks.c; the kernel of Nakamura's 2007
// tuning, seed 001) and as his patch flattened it, in the kernel's order. The hook's own work is
// counted where the code does it:
// - each out-of-line call (Work::Call): the hook through security_ops (an indirect call);
//   Nested also file_has_perm and inode_has_perm; both the calls into avc_has_perm (the AVC's
//   own calls are counted by the AVC, strategies/avc.h);
// - each pointer followed to reach the SIDs (file -> dentry -> inode, inode->i_security,
//   current->security, file->f_security): a dependent load of a hot line, priced as one step
//   of a bit loop (Work::BitIteration: a load and a test). Nested reads current->security
//   twice (file_has_perm and inode_has_perm each load it);
// - AVC_AUDIT_DATA_INIT's memset of struct avc_audit_data (56 bytes on a 32-bit kernel: type,
//   tsk, and the union's largest member, the net part with two IPv6 addresses), in both.
// Not modelled: selinux_netlbl_inode_permission (the same in both forms: an out-of-line call
// with CONFIG_NETLABEL, inline 0 without), IS_PRIVATE's test, the O_APPEND mask and
// file_mask_to_av (a few ALU operations, inlined).
#pragma once

#include "strategies/security_server.h"

namespace locksim::strategies {

// The AVC check the hook ends in: avc_has_perm(ssid, tsid, tclass, requested).
using AvcHasPerm = FunctionRef<int(uint32_t, uint32_t, uint32_t, uint32_t)>;

// 0 or the first check's error. FileHook::None calls avc_has_perm on the inode alone.
int selinux_file_permission(FileHook hook, const FileCheck &f, AvcHasPerm avc_has_perm);

}  // namespace locksim::strategies
