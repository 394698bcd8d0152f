// The policy database: every table of a binary SELinux policy, as the security server uses it.
//
// Ownership and sharing. A Policydb is two pointers:
//   base : PolicyBase, everything except the conditional state; immutable once built, shared by
//          every copy of the Policydb;
//   cond : CondPolicy, the booleans, the conditional avtab and the conditional node list.
// Copying a Policydb is the kernel's shallow copy of the policy struct (two reference counts);
// cond_policydb_dup replaces `cond` in the copy with a deep copy of the old one. A full copy
// (rcu-full-copy) is policydb_write followed by policydb_read and shares nothing.
//
// Values are 1-based as in the policy file; every symbol table indexes its datums by value - 1
// (Symtab::by_value) and by name (Symtab::find).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ss/avtab.h"
#include "ss/conditional.h"
#include "ss/constraint.h"
#include "ss/context.h"
#include "ss/ebitmap.h"
#include "ss/hashtab.h"
#include "ss/mls_types.h"
#include "ss/symtab.h"

namespace locksim::ss {

// --- versions and header --------------------------------------------------------------------

inline constexpr uint32_t kPolicydbMagic = 0xf97cff8c;
inline constexpr std::string_view kPolicydbString = "SE Linux";

inline constexpr uint32_t POLICYDB_VERSION_BASE = 15;
inline constexpr uint32_t POLICYDB_VERSION_BOOL = 16;
inline constexpr uint32_t POLICYDB_VERSION_IPV6 = 17;
inline constexpr uint32_t POLICYDB_VERSION_NLCLASS = 18;
inline constexpr uint32_t POLICYDB_VERSION_VALIDATETRANS = 19;
inline constexpr uint32_t POLICYDB_VERSION_MLS = 19;
inline constexpr uint32_t POLICYDB_VERSION_AVTAB = 20;
inline constexpr uint32_t POLICYDB_VERSION_RANGETRANS = 21;
inline constexpr uint32_t POLICYDB_VERSION_POLCAP = 22;
inline constexpr uint32_t POLICYDB_VERSION_PERMISSIVE = 23;
inline constexpr uint32_t POLICYDB_VERSION_BOUNDARY = 24;
inline constexpr uint32_t POLICYDB_VERSION_FILENAME_TRANS = 25;
inline constexpr uint32_t POLICYDB_VERSION_ROLETRANS = 26;
inline constexpr uint32_t POLICYDB_VERSION_NEW_OBJECT_DEFAULTS = 27;
inline constexpr uint32_t POLICYDB_VERSION_DEFAULT_TYPE = 28;
inline constexpr uint32_t POLICYDB_VERSION_CONSTRAINT_NAMES = 29;
inline constexpr uint32_t POLICYDB_VERSION_XPERMS_IOCTL = 30;
inline constexpr uint32_t POLICYDB_VERSION_INFINIBAND = 31;
inline constexpr uint32_t POLICYDB_VERSION_GLBLUB = 32;
inline constexpr uint32_t POLICYDB_VERSION_COMP_FTRANS = 33;

inline constexpr uint32_t kPolicyVersionReadMin = 19;
inline constexpr uint32_t kPolicyVersionReadMax = 33;
inline constexpr uint32_t kPolicyVersionWriteMin = 24;
inline constexpr uint32_t kPolicyVersionWriteMax = 33;

// header config bits
inline constexpr uint32_t POLICYDB_CONFIG_MLS = 1;
inline constexpr uint32_t REJECT_UNKNOWN = 2;
inline constexpr uint32_t ALLOW_UNKNOWN = 4;
inline constexpr uint32_t POLICYDB_CONFIG_UNKNOWN_MASK = REJECT_UNKNOWN | ALLOW_UNKNOWN;

// symbol table indexes, in file order
enum SymIndex : uint32_t {
    SYM_COMMONS = 0,
    SYM_CLASSES,
    SYM_ROLES,
    SYM_TYPES,
    SYM_USERS,
    SYM_BOOLS,
    SYM_LEVELS,
    SYM_CATS,
    SYM_NUM
};

// ocontext kinds, in file order
enum OconIndex : uint32_t {
    OCON_ISID = 0,   // initial SIDs
    OCON_FS,         // unlabeled file systems
    OCON_PORT,       // TCP/UDP/... ports
    OCON_NETIF,      // network interfaces
    OCON_NODE,       // IPv4 nodes
    OCON_FSUSE,      // fs_use_xattr / fs_use_trans / fs_use_task
    OCON_NODE6,      // IPv6 nodes
    OCON_IBPKEY,     // Infiniband partition keys (v31+)
    OCON_IBENDPORT,  // Infiniband end ports (v31+)
    OCON_NUM
};

// Symbol and ocontext table counts a version's file carries (policydb_compat).
uint32_t policydb_sym_num(uint32_t version);
uint32_t policydb_ocon_num(uint32_t version);

// --- symbol datums --------------------------------------------------------------------------

struct PermDatum {
    std::string name;
    uint32_t value = 0;  // bit value - 1 of the class's access vector
};

struct CommonDatum {
    std::string name;
    uint32_t value = 0;
    Symtab<PermDatum> permissions;
};

// ClassDatum::default_user / default_role / default_type
inline constexpr uint32_t DEFAULT_SOURCE = 1;
inline constexpr uint32_t DEFAULT_TARGET = 2;
// ClassDatum::default_range
inline constexpr uint32_t DEFAULT_SOURCE_LOW = 1;
inline constexpr uint32_t DEFAULT_SOURCE_HIGH = 2;
inline constexpr uint32_t DEFAULT_SOURCE_LOW_HIGH = 3;
inline constexpr uint32_t DEFAULT_TARGET_LOW = 4;
inline constexpr uint32_t DEFAULT_TARGET_HIGH = 5;
inline constexpr uint32_t DEFAULT_TARGET_LOW_HIGH = 6;
inline constexpr uint32_t DEFAULT_GLBLUB = 7;

struct ClassDatum {
    std::string name;
    uint32_t value = 0;
    std::string comkey;               // name of the inherited common, empty if none
    CommonDatum *comdatum = nullptr;  // the inherited common (its permissions come first)
    Symtab<PermDatum> permissions;    // the class's own permissions
    std::vector<Constraint> constraints;
    std::vector<Constraint> validatetrans;
    uint32_t default_user = 0;
    uint32_t default_role = 0;
    uint32_t default_type = 0;
    uint32_t default_range = 0;
};

struct RoleDatum {
    std::string name;
    uint32_t value = 0;
    uint32_t bounds = 0;  // bounding role value, 0 if none
    Ebitmap dominates;    // roles this role dominates (itself included)
    Ebitmap types;        // types authorised for the role
};

inline constexpr uint32_t OBJECT_R_VAL = 1;
inline constexpr std::string_view OBJECT_R = "object_r";

// type properties on disk (v24+)
inline constexpr uint32_t TYPEDATUM_PROPERTY_PRIMARY = 0x0001;
inline constexpr uint32_t TYPEDATUM_PROPERTY_ATTRIBUTE = 0x0002;

struct TypeDatum {
    std::string name;
    uint32_t value = 0;   // for an alias, the value of the type it names
    uint32_t bounds = 0;  // bounding type value, 0 if none
    bool primary = true;  // false: an alias
    bool attribute = false;
};
template <>
inline bool symtab_is_primary(const TypeDatum &d) {
    return d.primary;
}

struct UserDatum {
    std::string name;
    uint32_t value = 0;
    uint32_t bounds = 0;
    Ebitmap roles;       // authorised roles
    MlsRange range;      // MLS: authorised range
    MlsLevel dfltlevel;  // MLS: default level
};

// A sensitivity: its value is level.sens (kept also in `value`).
struct LevelDatum {
    std::string name;
    uint32_t value = 0;
    MlsLevel level;  // sensitivity and the categories allowed with it
    bool isalias = false;
};
template <>
inline bool symtab_is_primary(const LevelDatum &d) {
    return !d.isalias;
}

struct CatDatum {
    std::string name;
    uint32_t value = 0;
    bool isalias = false;
};
template <>
inline bool symtab_is_primary(const CatDatum &d) {
    return !d.isalias;
}

// --- rule tables ----------------------------------------------------------------------------

struct RoleTransKey {
    uint32_t role = 0;
    uint32_t type = 0;
    uint32_t tclass = 0;
};
struct RoleTrans {
    RoleTransKey key;
    uint32_t new_role = 0;
};
struct RoleTransKeyTraits {
    static uint32_t hash(const RoleTransKey &k) { return k.role + (k.type << 3) + (k.tclass << 5); }
    static int cmp(const RoleTransKey &a, const RoleTransKey &b) {
        if (a.role != b.role) return a.role < b.role ? -1 : 1;
        if (a.type != b.type) return a.type < b.type ? -1 : 1;
        if (a.tclass != b.tclass) return a.tclass < b.tclass ? -1 : 1;
        return 0;
    }
};

struct RoleAllow {
    uint32_t role = 0;
    uint32_t new_role = 0;
};

// Filename transitions: (target type, class, name) -> list of (source types, new type).
struct FilenameTransKey {
    uint32_t ttype = 0;
    uint32_t tclass = 0;
    std::string_view name;  // points into FilenameTrans::name
};
struct FilenameTransDatum {
    Ebitmap stypes;  // source types (bit = value - 1)
    uint32_t otype = 0;
};
struct FilenameTrans {
    uint32_t ttype = 0;
    uint32_t tclass = 0;
    std::string name;
    std::vector<FilenameTransDatum> datums;
};
struct FilenameTransKeyTraits {
    static uint32_t hash(const FilenameTransKey &k) {
        return symhash(k.name) ^ (k.ttype * 0x9e3779b1u) ^ (k.tclass << 16);
    }
    static int cmp(const FilenameTransKey &a, const FilenameTransKey &b) {
        if (a.ttype != b.ttype) return a.ttype < b.ttype ? -1 : 1;
        if (a.tclass != b.tclass) return a.tclass < b.tclass ? -1 : 1;
        return a.name.compare(b.name);
    }
};

// Range transitions: (source type, target type, class) -> range.
struct RangeTransKey {
    uint32_t source_type = 0;
    uint32_t target_type = 0;
    uint32_t target_class = 0;
};
struct RangeTrans {
    RangeTransKey key;
    MlsRange range;
};
struct RangeTransKeyTraits {
    static uint32_t hash(const RangeTransKey &k) {
        return k.source_type + (k.target_type << 3) + (k.target_class << 5);
    }
    static int cmp(const RangeTransKey &a, const RangeTransKey &b) {
        if (a.source_type != b.source_type) return a.source_type < b.source_type ? -1 : 1;
        if (a.target_type != b.target_type) return a.target_type < b.target_type ? -1 : 1;
        if (a.target_class != b.target_class) return a.target_class < b.target_class ? -1 : 1;
        return 0;
    }
};

// --- object contexts ------------------------------------------------------------------------

// fs_use behaviours (Ocontext::behavior for OCON_FSUSE)
inline constexpr uint32_t SECURITY_FS_USE_XATTR = 1;
inline constexpr uint32_t SECURITY_FS_USE_TRANS = 2;
inline constexpr uint32_t SECURITY_FS_USE_TASK = 3;

// One entry of an ocontext list; which fields are meaningful depends on the kind.
struct Ocontext {
    std::string name;            // FS, NETIF, FSUSE: name; IBENDPORT: device name
    uint32_t sid_value = 0;      // ISID: the initial SID number
    uint32_t protocol = 0;       // PORT
    uint32_t low_port = 0;       // PORT; IBPKEY low pkey; IBENDPORT port
    uint32_t high_port = 0;      // PORT; IBPKEY high pkey
    uint32_t addr[4] = {};       // NODE: addr[0] (network order); NODE6: all four
    uint32_t mask[4] = {};       // NODE: mask[0]; NODE6: all four
    uint32_t behavior = 0;       // FSUSE
    uint64_t subnet_prefix = 0;  // IBPKEY: the 8 bytes as stored (network order)
    Context context[2];          // [0] object/interface context, [1] FS/NETIF message context
};

struct GenfsEntry {
    std::string path;
    uint32_t sclass = 0;  // 0: any class
    Context context;
};
// Sorted by fstype; entries sorted by decreasing path length (longest prefix first).
struct Genfs {
    std::string fstype;
    std::vector<GenfsEntry> entries;
};

// --- the policy -----------------------------------------------------------------------------

struct PolicyBase {
    uint32_t policyvers = 0;
    bool mls = false;
    uint32_t handle_unknown = 0;  // 0 (deny), REJECT_UNKNOWN or ALLOW_UNKNOWN

    Ebitmap policycaps;      // capability n = bit n
    Ebitmap permissive_map;  // type value v = bit v (bit 0 unused)

    Symtab<CommonDatum> commons;
    Symtab<ClassDatum> classes;
    Symtab<RoleDatum> roles;
    Symtab<TypeDatum> types;  // types, attributes and aliases
    Symtab<UserDatum> users;
    Symtab<LevelDatum> levels;  // sensitivities and their aliases
    Symtab<CatDatum> cats;      // categories and their aliases

    Avtab te_avtab;

    std::vector<RoleTrans> role_tr;                                     // file order
    Hashtab<RoleTransKey, uint32_t, RoleTransKeyTraits> role_tr_index;  // -> new_role
    std::vector<RoleAllow> role_allow;

    std::deque<FilenameTrans> filename_trans;  // in insertion order
    Hashtab<FilenameTransKey, FilenameTrans *, FilenameTransKeyTraits> filename_trans_index;
    uint32_t filename_trans_rules = 0;  // (stype, ttype, class, name) rules, as before v33

    std::array<std::vector<Ocontext>, OCON_NUM> ocontexts;
    std::vector<Genfs> genfs;

    std::deque<RangeTrans> range_tr;  // file order
    Hashtab<RangeTransKey, const MlsRange *, RangeTransKeyTraits> range_tr_index;

    // Per type value v (index v - 1): the attributes of v, v itself included; and per
    // attribute value a: its member types.
    std::vector<Ebitmap> type_attr_map;
    std::vector<Ebitmap> attr_type_map;

    // The policy's name for the cache model, where it is read as a whole (serialised: its
    // structures taken as one stream of lines in the order the writer visits them).
    uint32_t lines = next_line_object();

    uint32_t process_class = 0;        // value of class "process"
    uint32_t process_trans_perms = 0;  // its transition | dyntransition bits

    // Lookups used by the services.
    const uint32_t *role_trans_search(uint32_t role, uint32_t type, uint32_t tclass) const {
        return role_tr_index.search(RoleTransKey{role, type, tclass});
    }
    const MlsRange *range_trans_search(uint32_t stype, uint32_t ttype, uint32_t tclass) const {
        auto *p = range_tr_index.search(RangeTransKey{stype, ttype, tclass});
        return p ? *p : nullptr;
    }
    // The new type for a named object created by stype in a ttype directory, 0 if none.
    uint32_t filename_trans_search(uint32_t stype, uint32_t ttype, uint32_t tclass,
                                   std::string_view name) const;

    // Adds a rule to filename_trans (merging into an existing key); false when the
    // (stype, ttype, class, name) rule is already there.
    bool filename_trans_add(uint32_t stype, uint32_t ttype, uint32_t tclass, std::string_view name,
                            uint32_t otype);
    // Adds a key with its datums (the v33 layout); false when the key exists.
    bool filename_trans_add_key(FilenameTrans ft);
    bool role_trans_add(const RoleTrans &rt);
    bool range_trans_add(RangeTrans rt);

    // Rebuilds every by-value index, the attribute maps' reverse direction, process_class and
    // process_trans_perms (policydb_index). Throws UserError naming the table on bad values.
    void index();
};

struct Policydb {
    std::shared_ptr<const PolicyBase> base;
    std::shared_ptr<CondPolicy> cond;

    const PolicyBase &b() const { return *base; }
    uint32_t version() const { return base->policyvers; }
    bool mls() const { return base->mls; }
};

// --- validity (policydb_context_isvalid and the MLS checks) ---------------------------------

// How mls_level_isvalid checks the categories against the sensitivity's.
enum class LevelCheck : uint8_t {
    Contains,  // ebitmap_contains(..., last_e2bit): the kernel since 3.13
    BitByBit,  // a bit-by-bit loop with ebitmap_get_bit: the kernel before 3.13
};

bool mls_level_isvalid(const PolicyBase &p, const MlsLevel &l,
                       LevelCheck how = LevelCheck::Contains);
bool mls_range_isvalid(const PolicyBase &p, const MlsRange &r,
                       LevelCheck how = LevelCheck::Contains);
// mls_context_isvalid + the user/role/type checks; true for any context of a non-MLS policy's
// MLS part.
bool policydb_context_isvalid(const PolicyBase &p, const Context &c,
                              LevelCheck how = LevelCheck::Contains);

// --- binary I/O -----------------------------------------------------------------------------

// Where a section of the binary format starts: the names policydb_read's errors use, in file
// order, with the byte offset of the section's first field.
struct PolicySection {
    std::string name;
    size_t offset = 0;
};

// Reads a binary policy (versions 19..33). Throws UserError("<source>: <section> at byte <n>:
// <what>") on any malformed input. Allocations are bounded by what the file can hold: every
// count is checked against the smallest legal encoding of its entries. `sections`, when given,
// receives each section as it is reached.
// `image_lines`: the image's name for the cache model, where it was just written
// (policydb_write's); 0: a name of its own.
Policydb policydb_read(std::span<const uint8_t> data, std::string_view source = "policy",
                       std::vector<PolicySection> *sections = nullptr, uint32_t image_lines = 0);
Policydb policydb_read_file(const std::string &path);

// Writes a binary policy of `version` (0: the version it was read as). Versions 24..33.
// Features the target version cannot express are dropped the way libsepol drops them
// (filename transitions below 25, non-process role transitions below 26, object defaults
// below 27/28, Infiniband contexts below 31, glblub below 32); extended-permission rules below
// 30 are refused with a UserError, as libsepol refuses them. The output is a function of the
// structures: write(read(write(read(x)))) == write(read(x)).
// `image_lines`, when given, receives the image's name for the cache model (for the reader that
// reads it next: policydb_read's image_lines).
std::vector<uint8_t> policydb_write(const Policydb &p, uint32_t version = 0,
                                    uint32_t *image_lines = nullptr);
void policydb_write_file(const Policydb &p, const std::string &path, uint32_t version = 0);

}  // namespace locksim::ss
