/* The block table (FORMAT.md section 5): blocks, functions and modules,
 * defined at instrumentation time (under Pin's VM lock) and read by the
 * threads' encoders (under `table_mutex` where a map is involved; block
 * records themselves never move once defined). */
#include "tf_pin.h"
#include <map>
#include <string.h>

#define CHUNK_BITS 12
#define N_CHUNKS 4096

static Block *chunks[N_CHUNKS];
static UINT32 n_blocks;
static PIN_MUTEX table_mutex;
static std::map<ADDRINT, std::vector<UINT32> > by_addr; /* ids at an address, increasing */
static std::map<ADDRINT, UINT32> fn_ids;                /* function entry -> id */
static std::map<UINT32, UINT32> module_ids;             /* IMG_Id -> module id */
static struct ModuleInfo {
    ADDRINT base, size;
    std::string path;
} modules[4096];
static UINT32 n_modules, n_functions;
static ADDRINT fixed_locks[TF_N_FIXED];
static tf_stream table;
static bool table_created;
static UINT8 table_header[TF_FILE_HEADER_SIZE];

static int table_sink(void *, const uint8_t *chunk, size_t len)
{
    return output_append(TF_FILE_BLOCKS, &table_created, table_header, chunk, len) ? 0 : -1;
}

void blocks_init()
{
    size_t cap = TF_CHUNK_TARGET + (256u << 10);
    PIN_MutexInit(&table_mutex);
    tf_stream_init(&table, malloc(cap), cap, TF_CHUNK_TARGET, table_sink, NULL);
    tf_file_header(table_header, TF_KIND_BLOCKS, 0, 0, 0, 0);
}

const Block *block(UINT32 id) { return &chunks[id >> CHUNK_BITS][id & ((1u << CHUNK_BITS) - 1)]; }

UINT32 blocks_count() { return n_blocks; }

UINT32 block_at(ADDRINT addr)
{
    UINT32 id = TF_NO_BLOCK;
    PIN_MutexLock(&table_mutex);
    std::map<ADDRINT, std::vector<UINT32> >::const_iterator it = by_addr.find(addr);
    if (it != by_addr.end())
        id = it->second.front();
    PIN_MutexUnlock(&table_mutex);
    return id;
}

ADDRINT fixed_lock(UINT32 fixed) { return fixed < TF_N_FIXED ? fixed_locks[fixed] : 0; }

void blocks_flush()
{
    PIN_MutexLock(&table_mutex);
    if (table.len > 0)
        tf_stream_close(&table);
    PIN_MutexUnlock(&table_mutex);
}

/* Room in the table stream for a record of `n` bytes (closing the chunk). */
static void table_room(size_t n)
{
    if (table.len > 0 && table.len + n > table.target)
        tf_stream_close(&table);
}

void module_add(IMG img)
{
    PIN_MutexLock(&table_mutex);
    if (n_modules < 4096 && module_ids.find(IMG_Id(img)) == module_ids.end()) {
        ModuleInfo &m = modules[n_modules++];
        m.base = IMG_LowAddress(img);
        m.size = IMG_HighAddress(img) - m.base + 1;
        m.path = IMG_Name(img);
        module_ids[IMG_Id(img)] = n_modules;
        table_room(64 + m.path.size());
        tf_table_module(&table, n_modules, m.base, m.size, m.path.data(), m.path.size(), NULL, 0);
    }
    PIN_MutexUnlock(&table_mutex);
}

void blocks_manifest_modules(tf_mp *mp)
{
    tf_mp_array(mp, n_modules);
    for (UINT32 i = 0; i < n_modules; i++) {
        tf_mp_map(mp, 5);
        tf_mp_cstr(mp, "id");
        tf_mp_uint(mp, i + 1);
        tf_mp_cstr(mp, "path");
        tf_mp_text(mp, modules[i].path.c_str());
        tf_mp_cstr(mp, "base");
        tf_mp_uint(mp, modules[i].base);
        tf_mp_cstr(mp, "size");
        tf_mp_uint(mp, modules[i].size);
        tf_mp_cstr(mp, "build_id");
        tf_mp_bin(mp, "", 0);
    }
}

/* The function id of routine `rtn` (defining it), and its role when the
 * block at `addr` is its entry. Call with table_mutex held. */
static UINT32 function_of(RTN rtn, ADDRINT addr, tf_function_role *role)
{
    role->role = TF_ROLE_NONE;
    if (!RTN_Valid(rtn))
        return 0;
    ADDRINT entry = RTN_Address(rtn);
    const std::string &name = RTN_Name(rtn);
    if (entry == addr) {
        std::vector<const char *> only, exclude;
        for (size_t i = 0; i < opt_only.size(); i++)
            only.push_back(opt_only[i].c_str());
        for (size_t i = 0; i < opt_exclude.size(); i++)
            exclude.push_back(opt_exclude[i].c_str());
        *role = tf_fn_role_of(name.c_str(), only.data(), only.size(), exclude.data(),
                              exclude.size());
        if (role->arg == TF_ARG_FIXED && role->role == TF_ROLE_ACQUIRE)
            fixed_locks[role->fixed] = entry;
    }
    std::map<ADDRINT, UINT32>::const_iterator it = fn_ids.find(entry);
    if (it != fn_ids.end())
        return it->second;
    IMG img = SEC_Img(RTN_Sec(rtn));
    std::map<UINT32, UINT32>::const_iterator m =
        IMG_Valid(img) ? module_ids.find(IMG_Id(img)) : module_ids.end();
    UINT32 id = ++n_functions;
    fn_ids[entry] = id;
    table_room(32 + name.size());
    tf_table_function(&table, id, entry, m == module_ids.end() ? 0 : m->second, name.data(),
                      name.size());
    return id;
}

void function_note(ADDRINT addr)
{
    tf_function_role role;
    PIN_LockClient();
    RTN rtn = RTN_FindByAddress(addr);
    PIN_MutexLock(&table_mutex);
    function_of(rtn, addr, &role);
    PIN_MutexUnlock(&table_mutex);
    PIN_UnlockClient();
}

static bool same_code(const Block *b, const UINT8 *code, const UINT8 *lens, UINT32 n_insns)
{
    const UINT8 *ident = (const UINT8 *)(b->insn_offset + b->info.n_insns);
    return b->info.n_insns == n_insns && memcmp(ident, code, b->info.code_len) == 0 &&
           memcmp(ident + b->info.code_len, lens, n_insns) == 0;
}

UINT32 block_get(ADDRINT addr, const UINT8 *code, const UINT8 *lens, UINT32 n_insns,
                 const tf_block_op *ops, UINT32 n_ops, unsigned end, RTN rtn)
{
    UINT32 code_len = 0;
    for (UINT32 i = 0; i < n_insns; i++)
        code_len += lens[i];
    PIN_MutexLock(&table_mutex);
    std::vector<UINT32> &same = by_addr[addr];
    for (size_t i = 0; i < same.size(); i++) {
        if (same_code(block(same[i]), code, lens, n_insns)) {
            UINT32 id = same[i];
            PIN_MutexUnlock(&table_mutex);
            return id;
        }
    }
    UINT32 id = n_blocks;
    if (!chunks[id >> CHUNK_BITS])
        chunks[id >> CHUNK_BITS] = new Block[1u << CHUNK_BITS];
    Block *b = &chunks[id >> CHUNK_BITS][id & ((1u << CHUNK_BITS) - 1)];
    b->fn_id = function_of(rtn, addr, &b->role);
    IMG img = RTN_Valid(rtn) ? SEC_Img(RTN_Sec(rtn)) : IMG_FindByAddress(addr);
    b->in_omp_runtime = IMG_Valid(img) && tf_is_omp_runtime(IMG_Name(img).c_str());
    /* per operand flags and instruction, per instruction offset, then the
     * code and the lengths (the block's identity) */
    b->op_insn = new UINT16[n_ops + 1];
    b->op_flags = new UINT8[n_ops + 1];
    b->insn_offset = (UINT32 *)(new UINT8[n_insns * 4 + code_len + n_insns]);
    UINT32 off = 0;
    for (UINT32 i = 0; i < n_insns; i++) {
        b->insn_offset[i] = off;
        off += lens[i];
    }
    UINT8 *ident = (UINT8 *)(b->insn_offset + n_insns);
    memcpy(ident, code, code_len);
    memcpy(ident + code_len, lens, n_insns);
    for (UINT32 j = 0; j < n_ops; j++) {
        b->op_insn[j] = ops[j].insn;
        b->op_flags[j] = ops[j].flags;
    }
    b->info.address = addr;
    b->info.code_len = code_len;
    b->info.n_insns = n_insns;
    b->info.n_ops = n_ops;
    b->info.end = end;
    b->info.op_flags = b->op_flags;
    tf_block_rec rec = {id, addr, b->fn_id, end, code, code_len, n_insns, lens, n_ops, ops};
    table_room(tf_table_block_size(&rec));
    tf_table_block(&table, &rec);
    same.push_back(id);
    n_blocks = id + 1; /* published last: readers see whole blocks only */
    PIN_MutexUnlock(&table_mutex);
    return id;
}
