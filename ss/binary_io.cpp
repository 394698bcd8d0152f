#include "ss/binary_io.h"

namespace locksim::ss {

void ebitmap_read(BinaryReader &r, Ebitmap &e) {
    e.clear();
    uint32_t mapunit = r.u32();
    uint32_t highbit = r.u32();
    uint32_t count = r.u32();
    if (mapunit != 64) r.fail("ebitmap map unit {} is not 64", mapunit);
    // Round the file's high bit up to whole nodes, as the kernel does.
    uint64_t hb = (uint64_t{highbit} + kEbitmapSize - 1) / kEbitmapSize * kEbitmapSize;
    if (hb > UINT32_MAX - kEbitmapSize) r.fail("ebitmap high bit {} is too large", highbit);
    if (hb == 0) {
        if (count) r.fail("ebitmap with high bit 0 has {} maps", count);
        return;
    }
    if (count == 0) r.fail("ebitmap with high bit {} has no maps", highbit);
    r.check_count(count, kEbitmapMapBytes, "ebitmap map");
    EbitmapNode *n = nullptr;
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t startbit = r.u32();
        if (startbit % 64) r.fail("ebitmap start bit {} is not a multiple of 64", startbit);
        if (startbit > hb - 64)
            r.fail("ebitmap start bit {} is beyond the high bit {}", startbit, highbit);
        if (!n || startbit >= n->startbit + kEbitmapSize) {
            n = e.append_node(startbit - startbit % kEbitmapSize, n);
        } else if (startbit <= n->startbit) {
            r.fail("ebitmap start bit {} is out of order", startbit);
        }
        uint64_t map = r.u64();
        if (!map) r.fail("ebitmap map at start bit {} is empty", startbit);
        uint32_t index = (startbit - n->startbit) / kEbitmapUnitSize;
        if (n->maps[index]) r.fail("ebitmap start bit {} is repeated", startbit);
        n->maps[index] = map;
    }
    if (n->startbit + kEbitmapSize != hb)
        r.fail("ebitmap high bit {} does not match its last map", highbit);
    e.set_highbit(static_cast<uint32_t>(hb));
    e.name_lines(next_line_object());
}

void ebitmap_write(BinaryWriter &w, const Ebitmap &e) {
    // Count the non-zero 64-bit words and the high bit rounded up to 64.
    uint32_t count = 0, last_bit = 0;
    for (const EbitmapNode *n = e.first(); n; n = n->next)
        for (uint32_t i = 0; i < kEbitmapUnitNumbers; ++i)
            if (n->maps[i]) {
                ++count;
                last_bit = n->startbit + (i + 1) * kEbitmapUnitSize;
            }
    w.u32(64);
    w.u32(last_bit);
    w.u32(count);
    for (const EbitmapNode *n = e.first(); n; n = n->next)
        for (uint32_t i = 0; i < kEbitmapUnitNumbers; ++i)
            if (n->maps[i]) {
                w.u32(n->startbit + i * kEbitmapUnitSize);
                w.u64(n->maps[i]);
            }
}

void mls_level_read(BinaryReader &r, MlsLevel &l) {
    l.sens = r.u32();
    ebitmap_read(r, l.cat);
}

void mls_level_write(BinaryWriter &w, const MlsLevel &l) {
    w.u32(l.sens);
    ebitmap_write(w, l.cat);
}

void mls_range_read(BinaryReader &r, MlsRange &range) {
    uint32_t items = r.u32();
    if (items < 1 || items > 2) r.fail("MLS range has {} levels", items);
    range.level[0].sens = r.u32();
    range.level[1].sens = items > 1 ? r.u32() : range.level[0].sens;
    ebitmap_read(r, range.level[0].cat);
    if (items > 1)
        ebitmap_read(r, range.level[1].cat);
    else
        range.level[1].cat = range.level[0].cat;
}

void mls_range_write(BinaryWriter &w, const MlsRange &range) {
    bool eq = mls_level_eq(range.level[0], range.level[1]);
    w.u32(eq ? 1 : 2);
    w.u32(range.level[0].sens);
    if (!eq) w.u32(range.level[1].sens);
    ebitmap_write(w, range.level[0].cat);
    if (!eq) ebitmap_write(w, range.level[1].cat);
}

}  // namespace locksim::ss
