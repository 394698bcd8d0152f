// The policy database against libsepol: every count of `policy info` on the Debian policies and
// the fixtures, the writer's output accepted by libsepol, byte-stable round trips, version
// conversion, and bad input refused with a UserError that names the place.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <tuple>

#include "policy_test_util.h"
#include "ss/policy_info.h"
#include "ss/policydb.h"
#include "util/error.h"

namespace locksim::ss {
namespace {

using testing::all_policies;
using testing::expect_counts_equal;
using testing::load_bytes;

class PolicyFile : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyFile, CountsEqualLibsepol) {
    auto bytes = load_bytes(GetParam());
    ASSERT_FALSE(bytes.empty()) << GetParam();
    Policydb db = policydb_read(bytes, GetParam());
    expect_counts_equal(db, bytes, GetParam());
}

TEST_P(PolicyFile, WriteIsAcceptedByLibsepolAndStable) {
    auto bytes = load_bytes(GetParam());
    Policydb db = policydb_read(bytes, GetParam());
    if (db.version() < kPolicyVersionWriteMin) GTEST_SKIP() << "written only from version 24";
    std::vector<uint8_t> w1 = policydb_write(db);
    Policydb db1 = policydb_read(w1, "write 1");
    expect_counts_equal(db1, w1, GetParam() + " (written)");
    std::vector<uint8_t> w2 = policydb_write(db1);
    // An extended-permission rule whose key repeats goes before the one already there (the
    // kernel's avtab_insert), so each read reverses such a run: then a second round trip is the
    // one that gives the same bytes.
    std::set<std::tuple<uint16_t, uint16_t, uint16_t, uint16_t>> keys;
    bool repeated = false;
    auto note = [&](const AvtabNode &n) {
        if (n.key.specified & AVTAB_XPERMS)
            repeated |= !keys.insert({n.key.source_type, n.key.target_type, n.key.target_class,
                                      n.key.specified})
                             .second;
    };
    db1.b().te_avtab.for_each(note);
    if (db1.cond) db1.cond->te_cond_avtab.for_each(note);
    if (repeated) {
        EXPECT_TRUE(w1 == policydb_write(policydb_read(w2, "write 2")))
            << GetParam() << ": two round trips differ";
    } else {
        EXPECT_TRUE(w1 == w2) << GetParam() << ": write(read(write(read(x)))) differs";
    }
    // Same size as the original: nothing lost or invented.
    EXPECT_EQ(w1.size(), bytes.size()) << GetParam();
}

// The type -> attribute fan-out (`policy info --fan-out`) against libsepol's type_attr_map.
TEST_P(PolicyFile, FanOutEqualsLibsepol) {
    auto bytes = load_bytes(GetParam());
    FanOut f = policy_fan_out(policydb_read(bytes, GetParam()));
    sepol_fan_out sf;
    if (sepol_policy_fan_out(bytes.data(), bytes.size(), &sf) != 0) {
        EXPECT_EQ(f.domains_by, "roles") << GetParam();
        GTEST_SKIP() << "no attribute domain";
    }
    EXPECT_EQ(f.domains_by, "attribute domain");
    EXPECT_GT(sf.domains, 0u);
    EXPECT_EQ(f.domains.types, sf.domains);
    EXPECT_EQ(f.others.types, sf.others);
    EXPECT_EQ(std::llround(f.domains.mean * static_cast<double>(f.domains.types)), sf.domain_sum);
    EXPECT_EQ(std::llround(f.others.mean * static_cast<double>(f.others.types)), sf.other_sum);
    EXPECT_EQ(f.domains.max, sf.domain_max);
    EXPECT_EQ(f.others.max, sf.other_max);
    EXPECT_LE(f.domains.p50, f.domains.p99);
    EXPECT_LE(f.domains.p99, f.domains.max);
    EXPECT_LE(f.domains.tail, f.domains.types);
}

TEST_P(PolicyFile, ConvertsTo33And24) {
    auto bytes = load_bytes(GetParam());
    Policydb db = policydb_read(bytes, GetParam());
    PolicyInfo a = policy_info(db);
    for (uint32_t v : {33u, 24u}) {
        uint64_t xperms = a.at("avtab_allowxperm") + a.at("avtab_auditallowxperm") +
                          a.at("avtab_dontauditxperm") + a.at("cond_avtab_allowxperm");
        if (v < POLICYDB_VERSION_XPERMS_IOCTL && xperms) {
            EXPECT_THROW(policydb_write(db, v), UserError) << "xperms cannot be written";
            continue;
        }
        std::vector<uint8_t> out = policydb_write(db, v);
        Policydb back = policydb_read(out, "converted");
        EXPECT_EQ(back.version(), v);
        sepol_counts sc;
        EXPECT_EQ(sepol_policy_counts(out.data(), out.size(), &sc), 0)
            << GetParam() << " as version " << v;
        PolicyInfo b = policy_info(back);
        // Policies compiled below 24 carry no attribute names (their type values have gaps);
        // the newer format names each such attribute.
        uint64_t nameless = 0;
        for (uint32_t t = 1; t <= db.b().types.nprim; ++t)
            if (!db.b().types.by_value(t)) ++nameless;
        EXPECT_EQ(nameless > 0, db.version() < kPolicyVersionWriteMin) << GetParam();
        EXPECT_EQ(b.at("attributes"), a.at("attributes") + nameless) << GetParam();
        for (uint32_t t = 1; t <= back.b().types.nprim; ++t)
            EXPECT_NE(back.b().types.by_value(t), nullptr) << GetParam() << ": type value " << t;
        for (const auto &[k, n] : a.counts) {
            if (k == "attributes") continue;
            // What version 24 cannot express is dropped; everything else is kept.
            bool dropped_at_24 = k == "filename_trans" || k == "filename_trans_keys" ||
                                 k == "role_trans" || k == "ocon_ibpkey" || k == "ocon_ibendport";
            if (v == 24 && dropped_at_24)
                EXPECT_LE(b.at(k), n) << k;
            else
                EXPECT_EQ(b.at(k), n) << GetParam() << " v" << v << ": " << k;
        }
    }
}

std::string param_name(const ::testing::TestParamInfo<std::string> &info) {
    std::string s = std::filesystem::path(info.param).filename().string();
    for (char &c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
}

INSTANTIATE_TEST_SUITE_P(All, PolicyFile, ::testing::ValuesIn(all_policies()), param_name);

TEST(PolicyRoundTrip, Debian33To24AndBack) {
    auto bytes = load_bytes(std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33");
    Policydb db = policydb_read(bytes, "default");
    std::vector<uint8_t> v24 = policydb_write(db, 24);
    Policydb db24 = policydb_read(v24, "default as 24");
    std::vector<uint8_t> v33 = policydb_write(db24, 33);
    Policydb back = policydb_read(v33, "default back to 33");
    EXPECT_EQ(policy_info(back).at("avtab_entries"), 102340u);
    EXPECT_EQ(policy_info(back).at("cond_avtab_entries"), 27347u);
    EXPECT_EQ(policy_info(back).at("types"), 3936u);
}

TEST(PolicyStructure, LookupsByNameAndValue) {
    Policydb db = policydb_read_file(std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33");
    const PolicyBase &p = db.b();
    const TypeDatum *t = p.types.find("unconfined_t");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(p.types.by_value(t->value), t);
    EXPECT_EQ(p.types.name_of(t->value), "unconfined_t");
    EXPECT_EQ(p.type_attr_map.size(), p.types.nprim);
    EXPECT_TRUE(p.type_attr_map[t->value - 1].get_bit(t->value - 1));
    const TypeDatum *domain = p.types.find("domain");
    ASSERT_NE(domain, nullptr);
    EXPECT_TRUE(domain->attribute);
    EXPECT_TRUE(p.type_attr_map[t->value - 1].get_bit(domain->value - 1));
    EXPECT_TRUE(p.attr_type_map[domain->value - 1].get_bit(t->value - 1));
    EXPECT_NE(p.classes.find("file"), nullptr);
    EXPECT_EQ(p.classes.name_of(p.process_class), "process");
    EXPECT_NE(p.process_trans_perms, 0u);
    EXPECT_NE(db.cond->bools.find("secure_mode"), nullptr);
    const LevelDatum *s0 = p.levels.find("s0");
    ASSERT_NE(s0, nullptr);
    EXPECT_EQ(s0->level.cat.cardinality(), 1024u);
    // An allow rule of the policy is found in the avtab.
    bool found = false;
    p.te_avtab.for_each([&](const AvtabNode &n) {
        if (!found && (n.key.specified & AVTAB_ALLOWED)) {
            AvtabKey k = n.key;
            const AvtabDatum *d = p.te_avtab.search(k);
            found = d && d->u.data == n.datum.u.data;
        }
    });
    EXPECT_TRUE(found);
    // Every context the policy carries is valid by our check, both MLS variants agree.
    for (const Ocontext &c : p.ocontexts[OCON_PORT]) {
        EXPECT_TRUE(policydb_context_isvalid(p, c.context[0]));
        EXPECT_TRUE(policydb_context_isvalid(p, c.context[0], LevelCheck::BitByBit));
    }
}

TEST(PolicyStructure, CondDupSharesEverythingElse) {
    Policydb db = policydb_read_file(std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33");
    Policydb copy = db;  // the shallow copy of the policy struct
    EXPECT_EQ(copy.base.get(), db.base.get());
    EXPECT_EQ(copy.cond.get(), db.cond.get());
    // The conditional state on its own: the boolean table copies deeply.
    Symtab<BoolDatum> bools = db.cond->bools;
    bools.by_value(1)->state ^= 1;
    EXPECT_NE(bools.by_value(1)->state, db.cond->bools.by_value(1)->state);
    EXPECT_EQ(bools.find(db.cond->bools.by_value(1)->name), bools.by_value(1));
}

// --- bad input --------------------------------------------------------------------------------

std::vector<uint8_t> small_fixture() {
    return load_bytes(std::string(LOCKSIM_FIXTURE_DIR) + "/mls.33");
}

void expect_user_error(const std::vector<uint8_t> &bytes, const std::string &needle) {
    try {
        policydb_read(bytes, "bad");
        ADD_FAILURE() << "accepted, expected an error containing '" << needle << "'";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at byte"), std::string::npos) << e.what();
    }
}

TEST(PolicyBadInput, EveryTruncationIsAUserError) {
    auto bytes = small_fixture();
    ASSERT_GT(bytes.size(), 1000u);
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
        EXPECT_THROW(policydb_read(cut, "cut"), UserError) << "prefix " << n;
    }
}

// A section whose bytes are all there is read through: cut the file where the next section
// starts, and the reader must fail there (truncated) and not inside the section, which it would
// if a count check assumed larger entries than the file holds. The fixtures hold the smallest
// legal entries of each table (tests/fixtures/minimal.conf), so every check is met exactly.
TEST_P(PolicyFile, EverySectionIsReadWhenItsBytesAreThere) {
    auto bytes = load_bytes(GetParam());
    std::vector<PolicySection> sections;
    policydb_read(bytes, GetParam(), &sections);
    ASSERT_GT(sections.size(), 10u);
    for (size_t i = 1; i < sections.size(); ++i) {
        size_t end = sections[i].offset;
        if (end == sections[i - 1].offset) continue;  // an empty section
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(end));
        if (end == bytes.size()) {
            EXPECT_NO_THROW(policydb_read(cut, "cut")) << GetParam();
            continue;
        }
        try {
            policydb_read(cut, "cut");
            ADD_FAILURE() << GetParam() << ": a cut at byte " << end << " was read";
        } catch (const UserError &e) {
            std::string expected = fmt::format("at byte {}: truncated", end);
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
                << GetParam() << ": '" << sections[i - 1].name << "' ends at byte " << end
                << ", but the cut there fails with: " << e.what();
        }
    }
}

TEST(PolicyBadInput, WrongMagicAndVersion) {
    auto bytes = small_fixture();
    bytes[0] ^= 0xff;
    expect_user_error(bytes, "magic");
    bytes = small_fixture();
    bytes[16] = 34;  // version
    expect_user_error(bytes, "version");
    bytes = small_fixture();
    bytes[16] = 18;
    expect_user_error(bytes, "version");
    // A byte of the identifier changed: quoted as text, the bytes that are not text escaped.
    bytes = small_fixture();
    bytes[12] = 0xa9;  // "SE Linux" starts at byte 8, after the magic and its length
    bytes[13] = '\n';
    expect_user_error(bytes, "identifier 'SE L\\xa9\\x0aux' is not 'SE Linux'");
}

// The avtab count sits right after the last category; find it by writing a policy whose
// avtab count we know and patching that count.
TEST(PolicyBadInput, ImpossibleCountsAreRefusedBeforeAllocating) {
    auto bytes = small_fixture();
    Policydb db = policydb_read(bytes, "fixture");
    uint32_t nel = db.b().te_avtab.nel();
    // The first occurrence of the count followed by a plausible first rule.
    size_t at = 0;
    for (size_t i = 0; i + 8 < bytes.size(); ++i) {
        uint32_t v;
        std::memcpy(&v, &bytes[i], 4);
        if (v == nel) {
            std::vector<uint8_t> patched = bytes;
            uint32_t huge = 0x80000000u;
            std::memcpy(&patched[i], &huge, 4);
            try {
                policydb_read(patched, "p");
            } catch (const UserError &e) {
                if (std::string(e.what()).find("avtab") != std::string::npos &&
                    std::string(e.what()).find("impossible") != std::string::npos) {
                    at = i;
                    break;
                }
            }
        }
    }
    EXPECT_NE(at, 0u) << "no avtab count found to patch";
    // Symbol-table counts too: the commons' nel is the second word after the header.
    size_t commons = 4 + 4 + 8 + 16;  // magic, length, string, 4 words
    // skip the two ebitmaps (polcaps, permissive) by reading their sizes
    auto skip_ebitmap = [&](size_t off) {
        uint32_t count;
        std::memcpy(&count, &bytes[off + 8], 4);
        return off + 12 + 12 * count;
    };
    commons = skip_ebitmap(skip_ebitmap(commons));
    std::vector<uint8_t> patched = bytes;
    uint32_t huge = 0x7fffffffu;
    std::memcpy(&patched[commons + 4], &huge, 4);
    expect_user_error(patched, "commons");
}

TEST(PolicyBadInput, RandomCorruptionNeverCrashes) {
    auto bytes = small_fixture();
    std::mt19937 rng(42);
    int refused = 0;
    for (int i = 0; i < 3000; ++i) {
        std::vector<uint8_t> b = bytes;
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f)
            b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        try {
            policydb_read(b, "fuzz");
        } catch (const UserError &) {
            ++refused;
        }
    }
    EXPECT_GT(refused, 1000);
}

// Bounds loops and out-of-range values made through the structures, written, read back.
TEST(PolicyBadInput, BoundsLoopAndBadIndexes) {
    Policydb db = policydb_read(small_fixture(), "fixture");
    {
        auto base = std::make_shared<PolicyBase>();
        Policydb copy = policydb_read(policydb_write(db), "copy");
        auto *mut = const_cast<PolicyBase *>(copy.base.get());
        TypeDatum *a = mut->types.find("user_t");
        TypeDatum *b = mut->types.find("dbd_t");
        ASSERT_TRUE(a && b);
        a->bounds = b->value;
        b->bounds = a->value;
        expect_user_error(policydb_write(copy), "bounds");
    }
    {
        Policydb copy = policydb_read(policydb_write(db), "copy");
        auto *mut = const_cast<PolicyBase *>(copy.base.get());
        mut->role_allow.push_back(RoleAllow{1, 999});
        expect_user_error(policydb_write(copy), "role allow");
    }
    {
        Policydb copy = policydb_read(policydb_write(db), "copy");
        auto *mut = const_cast<PolicyBase *>(copy.base.get());
        mut->ocontexts[OCON_PORT][0].context[0].type = 9999;
        expect_user_error(policydb_write(copy), "ports");
    }
}

}  // namespace
}  // namespace locksim::ss
