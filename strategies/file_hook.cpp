#include "strategies/file_hook.h"

#include "kernel/platform.h"

namespace locksim::strategies {

using locksim::count_work;
using locksim::Work;

namespace {

// sizeof(struct avc_audit_data) on a 32-bit v2.6.22 kernel: char type (padded to 4), the task
// pointer, and the union's net member (netif, sk, family, dport, sport, padding, two in6_addr).
constexpr uint64_t kAuditDataBytes = 4 + 4 + (4 + 4 + 2 + 2 + 2 + 2 + 32);

const kernel::Label &label_hook() {
    static const kernel::Label l("file_permission");
    return l;
}

// The hook's own work between two AVC checks.
void hook_work(uint64_t calls, uint64_t loads, uint64_t cleared) {
    kernel::stand_in(label_hook(), [&] {
        count_work(Work::Call, calls);
        count_work(Work::BitIteration, loads);
        if (cleared) count_work(Work::BytesCopied, cleared);
    });
}

// file_has_perm's descriptor check: the file was opened by another domain.
int fd_use(const FileCheck &f, AvcHasPerm avc_has_perm) {
    if (f.tsid == f.fsid) return 0;
    hook_work(1, 0, 0);  // the call into avc_has_perm
    return avc_has_perm(f.tsid, f.fsid, f.fd_class, f.fd_use);
}

}  // namespace

int selinux_file_permission(FileHook hook, const FileCheck &f, AvcHasPerm avc_has_perm) {
    switch (hook) {
        case FileHook::None:
            return avc_has_perm(f.tsid, f.isid, f.tclass, f.av);
        case FileHook::Nested: {
            // security_ops->file_permission; inode = file->f_path.dentry->d_inode.
            hook_work(1, 2, 0);
            // file_has_perm (out of line): current->security, file->f_security, the audit data.
            hook_work(1, 2, kAuditDataBytes);
            if (int rc = fd_use(f, avc_has_perm)) return rc;
            if (!f.av) return 0;
            // inode_has_perm (out of line): current->security again, inode->i_security; the
            // call into avc_has_perm.
            hook_work(2, 2, 0);
            return avc_has_perm(f.tsid, f.isid, f.tclass, f.av);
        }
        case FileHook::Flat: {
            // security_ops->file_permission; the inode, the three security structs and the
            // audit data, all in selinux_file_permission.
            hook_work(1, 5, kAuditDataBytes);
            if (int rc = fd_use(f, avc_has_perm)) return rc;
            if (!f.av) return 0;
            hook_work(1, 0, 0);  // the call into avc_has_perm
            return avc_has_perm(f.tsid, f.isid, f.tclass, f.av);
        }
    }
    return 0;
}

}  // namespace locksim::strategies
