-- dtio.lua - datatype I/O inside a Ceph OSD (paper 000 section III), run by the Lua object
-- class cls_lua (method eval_bufferlist). cls_lua compiles the script of every request in a
-- fresh Lua state and keeps nothing between requests; the script passes through a C string, so
-- it cannot be bytecode. The Tessera RADOS driver therefore sends this program precompiled
-- (luac -s at build time, about 1/15 of the OSD time of a compile): the script is a small
-- loader (dtio.c) that load()s the bytecode from the front of the input and calls its main chunk
-- with true, which returns the entry point `handle`. Where the OSD's Lua refuses the bytecode
-- (another Lua version or ABI) the loader returns -ENOEXEC, and the driver sends this text
-- itself (comments and indentation stripped), whose main chunk registers dtio_handler.
--
-- A request moves the bytes of one object that one access touches. Input (little-endian):
--   "TDIO" u8 version(1) u8 op(1 read, 2 write, 3 describe) u16 0
--   i64 disp start bytes unit factor objsize objno typelen
--   typelen bytes: the view's filetype in Tessera's wire form (src/type/codec.c)
--   writes: the data bytes that fall in this object, in stream order
-- The view's data stream is tiled from byte disp by the filetype; the access is stream bytes
-- [start, start + bytes). The file is striped RAID-0: stripe unit `unit`, `factor` objects per
-- stripe row, `objsize` bytes per object (a multiple of unit), object objno. For each stripe
-- unit of this object inside the access's extent the program finds the unit's stream range by
-- a seek by file offset (before), then walks that range of the type (partial processing: never
-- the whole access, never a list sent by the client). Reads gather the regions (one read of the
-- covering range of nearby regions) and reply with their bytes in stream order; writes sieve:
-- one read of a cluster's covering range when it has holes, the new bytes spliced in, one
-- write. A class call holds the object's lock, so each request is atomic on its object.
-- op 3 (describe) only decodes the type and replies with its invariants and whether the program
-- runs from bytecode (for tests).
--
-- Nothing in a request is trusted. The decoder checks what tess_type_decode checks (at most
-- MAX_DEPTH levels, encoded and through shared subtrees, alignments, counts against the bytes
-- left, no empty blocks, 64-bit overflow) and bounds the work: MAX_NODES nodes and MAX_BLOCKS
-- blocks, MAX_REGIONS regions and MAX_BYTES data bytes per request, MAX_ROWS stripe units per
-- object. Errors: -EINVAL malformed request or type, -E2BIG over a limit, -EDOM a filetype
-- that is not monotonic (no legal view), -ERANGE an offset beyond 2^62.
--
-- A node of a decoded type: k (0 predefined, 1 contig, 2 vector, 3 blockindexed, 4 indexed,
-- 5 struct), size (data bytes), lb, ext (extent), lo, hi (data bounds from its origin), mono
-- (regions strictly increasing), depth, n blocks. Block b (from 0) is blen(b) instances of
-- kid(b) at disp(b): regular nodes (1-3) keep one child c, blocklength bl and d0 + b * st or
-- the array D; irregular ones (4, 5) the arrays B, D (and C, children of a struct) and P (data
-- bytes before each block). F[b] is the end of the data of blocks 0..b (nondecreasing).

-- true when run from bytecode by the loader (describe reports it)
local PRECOMPILED = ...
local O = objclass
local EINVAL, E2BIG, EDOM, ERANGE = O.EINVAL, O.E2BIG, O.EDOM, O.ERANGE
local unpack, sub, concat, rep = string.unpack, string.sub, table.concat, string.rep
local min, max, abs = math.min, math.max, math.abs
local MAX_DEPTH, MAX_NODES, MAX_BLOCKS = 64, 65536, 1048576
local MAX_REGIONS, MAX_BYTES, MAX_ROWS = 262144, 134217728, 65536
local LIM = 1 << 62
-- nearby regions share one covering read (reads: closer than 8 KiB, writes: 1 MiB) of at most
-- MAX_CLUSTER bytes; a read's cover stays small, so it is still in the cache while its regions
-- are cut out of it (one cover over a whole object's part cost a tile reader's request about
-- 7% more OSD time)
local GAP, MAX_CLUSTER = {8192, 1048576}, {65536, 16777216}
-- a read's reply grows by pieces of REPLY_CHUNK bytes, or of 16 regions once they hold
-- MIN_APPEND: appending each region on its own to the reply costs the OSD more (an allocation
-- per append), one reply-sized string more still
local REPLY_CHUNK, MIN_APPEND = 65536, 16384
local SIZE = {[0] = 1, 1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8}
local PER = {0, 0, 8, 16, 18} -- wire bytes per block of each kind: bounds a count

-- t[1..n] as one string. Up to 16 pieces, one concatenation of 16 operands: it copies each
-- byte once, into the result; table.concat copies it about three times (into its buffer, as the
-- buffer grows, into the result), about 6% more OSD time for a tile reader's request.
local function join(t, n)
    if n > 16 then
        return concat(t, "", 1, n)
    end
    for k = n + 1, 16 do
        t[k] = ""
    end
    return t[1] .. t[2] .. t[3] .. t[4] .. t[5] .. t[6] .. t[7] .. t[8] .. t[9] .. t[10] .. t[11] ..
           t[12] .. t[13] .. t[14] .. t[15] .. t[16]
end

-- n zero bytes. string.rep copies its string once per repetition, so it repeats a block of
-- 1 KiB: repeating "\0" itself costs the OSD about 7 ns a byte (4 ms for 580 KB).
local ZEROS
local function zeros(n)
    ZEROS = ZEROS or rep("\0", 1024)
    return rep(ZEROS, n // 1024) .. sub(ZEROS, 1, n % 1024)
end

-- a failure carries its errno through error(); the handler returns it
local function fail(code, why)
    error({code, why}, 0)
end

-- checked: every value the walk uses stays within +-2^62 (so sums of two never overflow)
local function ck(v)
    if v >= LIM or v <= -LIM then
        fail(ERANGE, "offset out of range")
    end
    return v
end

local function mul(a, b)
    if a ~= 0 and b ~= 0 and abs(a * 1.0 * b) >= LIM then
        fail(ERANGE, "product out of range")
    end
    return a * b
end

local function disp(t, b) return t.D and t.D[b] or t.d0 + b * t.st end
local function blen(t, b) return t.B and t.B[b] or t.bl end
local function kid(t, b) return t.C and t.C[b] or t.c end
local function pre(t, b) return t.P and t.P[b] or b * t.per end

-- the last b < n with A[b] <= v (A nondecreasing, A[0] <= v)
local function last(A, n, v)
    local lo, hi = 0, n - 1
    while lo < hi do
        local m = (lo + hi + 1) // 2
        if A[m] <= v then lo = m else hi = m - 1 end
    end
    return lo
end

-- the block holding data byte q of one instance
local function blockof(t, q)
    if t.P then return last(t.P, t.n, q) end
    return t.per > 0 and q // t.per or 0
end

-- ------------------------------------------------------------------ decode

local function decode(s, p, e)
    if e - p < 9 or sub(s, p, p + 3) ~= "TSTY" then
        fail(EINVAL, "type: bad header")
    end
    local ver, res
    ver, res, p = unpack("<I2I2", s, p + 4)
    if ver ~= 2 or res ~= 0 then
        fail(EINVAL, "type: unknown version")
    end
    local done, nodes, blocks = {}, 0, 0
    local function get(fmt, n)
        if p + n > e then
            fail(EINVAL, "type: truncated")
        end
        local v
        v, p = unpack(fmt, s, p)
        return v
    end

    local function node(level)
        local tag = get("B", 1)
        if tag == 0 then
            local sz = SIZE[get("B", 1)] or fail(EINVAL, "type: unknown predefined id")
            return {k = 0, size = sz, lb = 0, ext = sz, lo = 0, hi = sz, mono = true,
                    depth = 0, n = 0}
        elseif tag == 6 then
            return done[get("<i8", 8) + 1] or fail(EINVAL, "type: reference to a node not "
                                                   .. "yet decoded")
        elseif tag > 6 then
            fail(EINVAL, "type: unknown tag")
        elseif level > MAX_DEPTH then
            fail(EINVAL, "type: nested too deeply")
        end
        nodes = nodes + 1
        if nodes > MAX_NODES then
            fail(E2BIG, "type: too many nodes")
        end
        local align = get("B", 1)
        if align == 0 or align & (align - 1) ~= 0 then
            fail(EINVAL, "type: alignment not a power of 2")
        end
        local lb, ext, n, d0 = get("<i8", 8), get("<i8", 8), get("<i8", 8), get("<i8", 8)
        local t = {k = tag, lb = lb, ext = ext, n = n, d0 = d0, bl = n, st = 0}
        if n < 0 then
            fail(EINVAL, "type: negative count")
        end
        if tag == 2 or tag == 3 then
            t.bl = get("<i8", 8)
            if tag == 2 then t.st = ck(get("<i8", 8)) end
            if t.bl < 1 then
                fail(EINVAL, "type: empty block")
            end
        end
        if PER[tag] > 0 and n > (e - p) // PER[tag] then
            fail(EINVAL, "type: count out of range")
        end
        if ext < 0 then
            fail(EINVAL, "type: negative extent")
        end
        ck(lb)
        ck(ext)
        ck(d0)
        ck(lb + ext)
        if tag == 1 then
            t.n = n > 0 and 1 or 0 -- one block of n children
        elseif tag >= 3 then
            t.D = {}
            if tag >= 4 then
                t.B = {}
                for b = 0, n - 1 do
                    t.B[b] = get("<i8", 8)
                    if t.B[b] < 1 then
                        fail(EINVAL, "type: empty block")
                    end
                end
            end
            for b = 0, n - 1 do
                t.D[b] = ck(ck(get("<i8", 8)) + d0)
            end
            blocks = blocks + n
            if blocks > MAX_BLOCKS then
                fail(E2BIG, "type: too many blocks")
            end
        end
        if tag == 5 then
            t.C = {}
            for b = 0, n - 1 do t.C[b] = node(level + 1) end
        else
            t.c = node(level + 1)
        end
        -- block b's data [lo, hi) from the node's origin, its bytes, whether it increases
        local function block(b)
            local c, l, d = kid(t, b), blen(t, b), disp(t, b)
            local bs = mul(l, c.size)
            if bs == 0 then
                return nil, nil, 0, true, c.depth
            end
            local far = ck(d + mul(l - 1, c.ext))
            return min(ck(d + c.lo), ck(far + c.lo)), max(ck(d + c.hi), ck(far + c.hi)), bs,
                   c.mono and (l == 1 or c.ext >= c.hi - c.lo), c.depth
        end
        local size, lo, hi, mono, depth = 0, nil, nil, true, 0
        if tag == 2 then -- a vector: its blocks are translates of block 0
            if n > 0 then
                local l, h, bs, inc, cd = block(0)
                depth, size = cd + 1, mul(bs, n)
                if bs > 0 then
                    local step = mul(n - 1, t.st)
                    lo, hi, t.bhi = min(l, ck(l + step)), max(h, ck(h + step)), h
                    mono = inc and (n == 1 or (t.st > 0 and ck(l + t.st) >= h))
                end
            end
        else
            local P, F, fin = {}, {}, -LIM
            for b = 0, t.n - 1 do
                P[b] = size
                local l, h, bs, inc, cd = block(b)
                depth = max(depth, cd + 1)
                if bs > 0 then
                    mono = mono and inc and l >= fin
                    lo, hi, fin = min(lo or l, l), max(hi or h, h), max(fin, h)
                end
                F[b] = fin
                size = ck(size + bs)
            end
            P[t.n] = size
            t.F = F
            if tag >= 4 then t.P = P end
        end
        if tag <= 3 then t.per = mul(t.bl, t.c.size) end
        if size == 0 and align ~= 1 then
            fail(EINVAL, "type: an empty node's alignment is not 1")
        end
        t.size, t.lo, t.hi, t.mono, t.depth = size, lo or 0, hi or 0, mono, depth
        if depth > MAX_DEPTH then
            fail(EINVAL, "type: nested too deeply")
        end
        done[#done + 1] = t
        return t
    end

    local root = node(1)
    if p ~= e then
        fail(EINVAL, "type: trailing bytes after the root node")
    end
    return root
end

-- ------------------------------------------------------------------ seek and walk

-- the offset of data byte q (0 <= q < size) of one instance of t from its origin
local function at(t, q)
    local off = 0
    while t.k ~= 0 do
        local b = blockof(t, q)
        local c, r = kid(t, b), q - pre(t, b)
        local j = r // c.size
        off, q, t = off + disp(t, b) + j * c.ext, r - j * c.size, c
    end
    return off + q
end

-- the data bytes of one instance of t at offsets below x from its origin
local function before(t, x)
    if t.size == 0 or x <= t.lo then
        return 0
    elseif x >= t.hi then
        return t.size
    elseif t.k == 0 then
        return x
    end
    -- nb: the blocks whose data ends at or before x; then instances of block nb's child
    local nb
    if t.F then
        nb = t.F[0] > x and 0 or last(t.F, t.n, x) + 1
    elseif t.n <= 1 then
        nb = x >= t.bhi and t.n or 0
    else
        nb = min(max((x - t.bhi) // t.st + 1, 0), t.n)
    end
    if nb >= t.n then
        return t.size
    end
    local c, l, xr = kid(t, nb), blen(t, nb), x - disp(t, nb)
    local k = (l == 1 or c.ext <= 0) and (xr >= c.hi and 1 or 0)
              or min(max((xr - c.hi) // c.ext + 1, 0), l)
    return pre(t, nb) + k * c.size + (k < l and before(c, xr - k * c.ext) or 0)
end

-- emit the regions of data bytes [q0, q1) of one instance of t whose origin is at base (kid,
-- pre, disp and blen written out: this loop runs per region, and a call each costs 7% more
-- instructions per tile-reader request)
local function walk(t, base, q0, q1, emit)
    if t.k == 0 then
        return emit(base + q0, q1 - q0)
    end
    local b = blockof(t, q0)
    local C, P, D, B, c, per, d0, st, bl = t.C, t.P, t.D, t.B, t.c, t.per, t.d0, t.st, t.bl
    while q0 < q1 do
        if C then c = C[b] end
        local bs = P and P[b] or b * per
        local cs, r0, d = c.size, q0 - bs, base + (D and D[b] or d0 + b * st)
        local r1 = min(q1 - bs, (B and B[b] or bl) * cs)
        if c.k == 0 then -- predefined elements lie back to back: one run
            emit(d + r0, r1 - r0)
        elseif cs > 0 then
            local j = r0 // cs
            while r0 < r1 do
                local e = min(r1 - j * cs, cs)
                walk(c, d + j * c.ext, r0 - j * cs, e, emit)
                r0, j = j * cs + e, j + 1
            end
        end
        q0, b = bs + r1, b + 1
    end
end

-- ------------------------------------------------------------------ the request

-- the request is s from byte s0 on
local function dtio(s, s0, output)
    if #s - s0 + 1 < 72 or sub(s, s0, s0 + 3) ~= "TDIO" then
        fail(EINVAL, "request: bad header")
    end
    local ver, op, res, disp0, start, bytes, su, sc, os, objno, tlen, pos =
        unpack("<BBI2i8i8i8i8i8i8i8i8", s, s0 + 4)
    if ver ~= 1 or res ~= 0 or op < 1 or op > 3 then
        fail(EINVAL, "request: unknown version or operation")
    end
    if tlen < 9 or tlen > #s - pos + 1 then
        fail(EINVAL, "request: type length out of range")
    end
    local t = decode(s, pos, pos + tlen)
    local pay = pos + tlen
    if op == 3 then
        output:append(string.format("%d %d %d %d %d %d %d %d", t.size, t.lb, t.ext, t.lo, t.hi,
                                    t.mono and 1 or 0, t.depth, PRECOMPILED and 1 or 0))
        return 0
    end
    if disp0 < 0 or start < 0 or bytes < 0 or su < 1 or sc < 1 or os < su or os % su ~= 0 or
        objno < 0 then
        fail(EINVAL, "request: bad range or geometry")
    end
    ck(start + bytes)
    ck(mul(os, sc))
    local rows = os // su
    if rows > MAX_ROWS then
        fail(E2BIG, "request: too many stripe units per object")
    elseif bytes > MAX_BYTES then
        fail(E2BIG, "request: too many bytes")
    elseif bytes > 0 and t.size == 0 then
        fail(EINVAL, "request: bytes of an empty filetype")
    elseif bytes == 0 then
        return 0
    end
    local E, ts = t.ext, t.size
    if not t.mono or E < t.hi - t.lo or disp0 + t.lo < 0 then
        fail(EDOM, "request: the filetype does not tile the file in increasing order")
    end
    -- the file offset of stream byte p, and the stream bytes at file offsets below x
    local function fileoff(p)
        local k = p // ts
        return ck(ck(disp0 + mul(k, E)) + at(t, p - k * ts))
    end
    local function sbefore(x)
        local rel = x - disp0
        if rel <= t.lo then
            return 0
        end
        local k = max((rel - t.hi) // E + 1, 0)
        return k * ts + before(t, rel - k * E)
    end
    -- the rows (stripe units) of this object the access's extent [lo, hi) meets
    local lo, hi = fileoff(start), fileoff(start + bytes - 1) + 1
    local W, base0 = su * sc, ck(mul(objno // sc, mul(os, sc)) + objno % sc * su)
    local offs, lens, nreg, total, shift = {}, {}, 0, 0, 0
    local function emit(off, len) -- a region, as an object offset (stream order = object order)
        local o = off + shift
        if nreg > 0 and offs[nreg] + lens[nreg] == o then
            lens[nreg] = lens[nreg] + len
        else
            nreg = nreg + 1
            if nreg > MAX_REGIONS then
                fail(E2BIG, "request: too many regions")
            end
            offs[nreg], lens[nreg] = o, len
        end
        total = total + len
    end
    for row = max((lo - su - base0) // W + 1, 0), min((hi - 1 - base0) // W, rows - 1) do
        local a = base0 + row * W
        local p0, p1 = max(sbefore(a), start), min(sbefore(a + su), start + bytes)
        shift = row * su - a
        while p0 < p1 do
            local k = p0 // ts
            local q1 = min(p1 - k * ts, ts)
            walk(t, disp0 + k * E, p0 - k * ts, q1, emit)
            p0 = k * ts + q1
        end
    end
    if op == 2 and #s - pay + 1 ~= total then
        fail(EINVAL, "request: the data does not match the access")
    elseif nreg == 0 then
        return 0
    end
    local ok, osize = pcall(O.stat)
    if not ok then
        if osize ~= -O.ENOENT then
            fail(O.EIO, "stat failed")
        end
        osize = 0
    end
    -- [o, o + n) of the object, zeros past its end
    local function read(o, n)
        local got = osize > o and O.read(o, min(osize - o, n)):str() or ""
        return #got < n and got .. zeros(n - #got) or got
    end
    local i, parts, np, held = 1, {}, 0, 0 -- reads: np parts of held bytes not yet replied
    while i <= nreg do
        -- a cluster: regions i..j with small gaps, bounded in size
        local c0, j, data = offs[i], i, lens[i]
        while j < nreg and offs[j + 1] - offs[j] - lens[j] <= GAP[op] and
            offs[j + 1] + lens[j + 1] - c0 <= MAX_CLUSTER[op] do
            j = j + 1
            data = data + lens[j]
        end
        local c1 = offs[j] + lens[j]
        local cover = (op == 1 or data < c1 - c0) and read(c0, c1 - c0)
        if op == 1 then -- into the reply by chunks: no reply-sized string
            for k = i, j do
                np, held = np + 1, held + lens[k]
                parts[np] = sub(cover, offs[k] - c0 + 1, offs[k] - c0 + lens[k])
                if held >= REPLY_CHUNK or np == 16 and held >= MIN_APPEND then
                    output:append(join(parts, np))
                    np, held = 0, 0
                end
            end
        else -- splice the new bytes into the old ones, write the cluster
            local seg, ns, at0 = {}, 0, c0
            for k = i, j do
                seg[ns + 1] = cover and sub(cover, at0 - c0 + 1, offs[k] - c0) or ""
                seg[ns + 2] = sub(s, pay, pay + lens[k] - 1)
                ns, pay, at0 = ns + 2, pay + lens[k], offs[k] + lens[k]
            end
            local bl = bufferlist.new()
            bl:append(concat(seg))
            O.write(c0, c1 - c0, bl)
        end
        i = j + 1
    end
    if np > 0 then
        output:append(join(parts, np))
    end
    return 0
end

-- run dtio, turning a rejection into its errno (and a line in the OSD log)
local function handle(s, s0, output)
    local ok, res = pcall(dtio, s, s0, output)
    if ok then
        return res
    elseif type(res) == "table" then
        O.log(0, "tessera dtio: " .. res[2])
        return -res[1]
    elseif type(res) == "number" then -- an objclass call failed with this (negative) errno
        return res
    end
    error(res)
end

if PRECOMPILED then
    return handle
end

function dtio_handler(input, output)
    return handle(input:str(), 1, output)
end

O.register(dtio_handler)
