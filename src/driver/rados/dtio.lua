-- dtio.lua - datatype I/O inside a Ceph OSD (paper 000 section III), run by the Lua object
-- class cls_lua (method eval_bufferlist, handler "dtio"). The Tessera RADOS driver embeds this
-- text at build time and sends it with every request; cls_lua compiles it in a fresh Lua state
-- per request (it keeps no state and cannot take bytecode: the script passes through a C string).
--
-- A request moves the bytes of one object that one access touches. Input (little-endian):
--   "TDIO" u8 version(1) u8 op(1 read, 2 write, 3 describe) u16 0
--   i64 disp start bytes unit factor objsize objno typelen
--   typelen bytes: the view's filetype in Tessera's wire form (src/type/codec.c)
--   writes: the data bytes that fall in this object, in stream order
-- The view's data stream is tiled from byte disp by the filetype; the access is stream bytes
-- [start, start + bytes). The file is striped RAID-0: stripe unit `unit`, `factor` objects per
-- stripe row, `objsize` bytes per object (a multiple of unit), object objno. The program finds
-- the stream bytes that lie in this object piece by piece (a stripe unit of the object is a
-- piece): the stream range of a piece comes from a seek by file offset, then a cursor walk of
-- that range yields its regions (partial processing: never the whole access, never a list
-- sent by the client). Reads gather the regions (one read per cluster of nearby regions) and
-- reply with their bytes in stream order; writes sieve: one read of a cluster's covering
-- range when it has holes, the new bytes spliced in memory, one write. A class call holds the
-- object's lock, so each request is atomic on its object.
-- op 3 (describe) only decodes the type and replies with its invariants (for tests).
--
-- Nothing in a request is trusted. The decoder checks what tess_type_decode checks (encoded
-- nesting <= 16, counts against the bytes left, no empty blocks, 64-bit overflow) and bounds
-- the work: at most MAX_TREE levels through shared subtrees, at most
-- MAX_NODES nodes and MAX_BLOCKS blocks, at most MAX_REGIONS regions and MAX_BYTES data bytes
-- per request, at most MAX_ROWS stripe units per object. Errors: -EINVAL malformed request or
-- type, -E2BIG over a limit, -EDOM a filetype that is not monotonic (no legal view),
-- -ERANGE an offset beyond 2^62.

local MAX_DEPTH = 16
-- levels of the tree including shared subtrees (references): bounds the recursion
local MAX_TREE = 64
local MAX_NODES = 65536
local MAX_BLOCKS = 1048576
local MAX_REGIONS = 262144
local MAX_BYTES = 134217728
local MAX_ROWS = 65536
local LIMIT = 4611686018427387904
-- clusters of regions closer than this are read (write: read-modify-written) as one range
local GAP_READ = 8192
local GAP_WRITE = 1048576
local MAX_CLUSTER = 16777216

local EINVAL, E2BIG, EDOM, ERANGE = objclass.EINVAL, objclass.E2BIG, objclass.EDOM,
    objclass.ERANGE
local unpack, sub, concat = string.unpack, string.sub, table.concat
local floor = math.floor

-- a failure carries its errno through error(); the handler turns it into the return code
local function fail(code, why)
    error({code = code, why = why}, 0)
end

-- checked arithmetic: every value the walk uses stays within +-2^62
local function chk(v)
    if v >= LIMIT or v <= -LIMIT then
        fail(ERANGE, "offset out of range")
    end
    return v
end
local function add(a, b)
    return chk(a + b)
end
local function mul(a, b)
    if a ~= 0 and b ~= 0 and math.abs(a * 1.0 * b) >= LIMIT then
        fail(ERANGE, "product out of range")
    end
    return a * b
end

local BUILTIN_SIZE = {[0] = 1, 1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8}

-- ------------------------------------------------------------------ decode

-- Decode the wire form in s[p0, p1). Every node gets: kind, size (data bytes), lb, extent,
-- tlb/tub (true data bounds relative to its origin, 0/0 when empty), depth, mono (regions
-- strictly increasing), and its blocks: n, displ(b), blen(b), child(b), pre(b) (data bytes
-- before block b), fin(b) (end of the data of blocks 0..b, non-decreasing).
local function decode(s, p0, p1)
    if p1 - p0 < 9 or sub(s, p0, p0 + 3) ~= "TSTY" then
        fail(EINVAL, "type: bad header")
    end
    local ver, res, pos = unpack("<I2I2", s, p0 + 4)
    if ver ~= 1 or res ~= 0 then
        fail(EINVAL, "type: unknown version")
    end
    local done, nodes, blocks = {}, 0, 0

    local function i64()
        if pos + 8 > p1 then
            fail(EINVAL, "type: truncated")
        end
        local v
        v, pos = unpack("<i8", s, pos)
        return v
    end

    local function node(level)
        if pos >= p1 then
            fail(EINVAL, "type: truncated")
        end
        local tag
        tag, pos = unpack("B", s, pos)
        if tag == 0 then
            if pos >= p1 then
                fail(EINVAL, "type: truncated")
            end
            local id
            id, pos = unpack("B", s, pos)
            local sz = BUILTIN_SIZE[id]
            if not sz then
                fail(EINVAL, "type: unknown predefined id")
            end
            return {kind = 0, size = sz, lb = 0, extent = sz, tlb = 0, tub = sz, depth = 0,
                    mono = true, n = 0}
        elseif tag == 6 then
            local idx = i64()
            if idx < 0 or idx >= #done then
                fail(EINVAL, "type: reference to a node not yet decoded")
            end
            return done[idx + 1]
        elseif tag < 1 or tag > 5 then
            fail(EINVAL, "type: unknown tag")
        elseif level > MAX_DEPTH then
            fail(EINVAL, "type: nested too deeply")
        end
        nodes = nodes + 1
        if nodes > MAX_NODES then
            fail(E2BIG, "type: too many nodes")
        end
        local t = {kind = tag}
        t.lb, t.extent = i64(), i64()
        local count, disp0 = i64(), i64()
        -- bytes each block costs on the wire (arrays, a struct's child): bounds the count
        local per = ({0, 0, 8, 16, 18})[tag]
        if count < 0 or (per > 0 and count > (p1 - pos) // per) then
            fail(EINVAL, "type: count out of range")
        end
        chk(t.lb)
        if t.extent < 0 then
            fail(EINVAL, "type: negative extent")
        end
        chk(t.extent)
        chk(disp0)
        chk(add(t.lb, t.extent))
        local blen, stride, blens, displs, kids = 1, 0, nil, nil, nil
        if tag == 1 then
            blen = count
            count = count > 0 and 1 or 0
        elseif tag == 2 then
            blen, stride = i64(), chk(i64())
        elseif tag == 3 then
            blen = i64()
            displs = {}
            for b = 1, count do
                displs[b] = add(chk(i64()), disp0)
            end
        else
            blens, displs = {}, {}
            for b = 1, count do
                blens[b] = i64()
                if blens[b] < 1 then
                    fail(EINVAL, "type: empty or negative block")
                end
            end
            for b = 1, count do
                displs[b] = add(chk(i64()), disp0)
            end
        end
        if blen < 0 or (tag ~= 1 and blen < 1) then
            fail(EINVAL, "type: empty or negative block")
        end
        if tag >= 3 then
            blocks = blocks + count
        end
        if blocks > MAX_BLOCKS then
            fail(E2BIG, "type: too many blocks")
        end
        if tag == 5 then
            kids = {}
            for b = 1, count do
                kids[b] = node(level + 1)
            end
        else
            kids = node(level + 1)
        end
        t.n = count
        -- block accessors (b from 0)
        if tag == 5 then
            t.childof = function(b) return kids[b + 1] end
        else
            t.child = kids
            t.childof = function() return kids end
        end
        if tag == 1 then
            t.displ = function() return disp0 end
        elseif tag == 2 then
            t.displ = function(b) return disp0 + b * stride end
        else
            t.displ = function(b) return displs[b + 1] end
        end
        if blens then
            t.blen = function(b) return blens[b + 1] end
        else
            t.blen = function() return blen end
        end
        -- invariants, with every sum checked. One block's data: lo, hi (relative to the
        -- node origin), bytes, and whether its instances increase
        local function block(b)
            local c, bl, d = t.childof(b), t.blen(b), t.displ(b)
            local bsize = mul(bl, c.size)
            if bsize == 0 then
                return nil, nil, 0, true, c.depth
            end
            -- data of instance j: d + j * extent(c) + [tlb(c), tub(c))
            local far = add(d, mul(bl - 1, c.extent))
            local lo = math.min(add(d, c.tlb), add(far, c.tlb))
            local hi = math.max(add(d, c.tub), add(far, c.tub))
            local inc = c.mono and (bl == 1 or c.extent >= c.tub - c.tlb)
            return lo, hi, bsize, inc, c.depth
        end
        local size, tlb, tub, mono, depth = 0, nil, nil, true, 0
        local pre, fin = {}, {}
        if tag == 2 then
            -- a vector: the blocks are translates of block 0 by stride
            if count > 0 then
                local lo, hi, bsize, inc, cd = block(0)
                depth = cd + 1
                size = mul(bsize, count)
                if bsize > 0 then
                    local step = mul(count - 1, stride)
                    tlb = math.min(lo, add(lo, step))
                    tub = math.max(hi, add(hi, step))
                    mono = inc and (count == 1 or (stride > 0 and add(lo, stride) >= hi))
                end
            end
        else
            local lastend = -LIMIT
            for b = 0, count - 1 do
                pre[b] = size
                local lo, hi, bsize, inc, cd = block(b)
                if cd + 1 > depth then
                    depth = cd + 1
                end
                if bsize > 0 then
                    if not inc or lo < lastend then
                        mono = false
                    end
                    tlb = tlb and math.min(tlb, lo) or lo
                    tub = tub and math.max(tub, hi) or hi
                    if hi > lastend then
                        lastend = hi
                    end
                end
                fin[b] = lastend
                size = add(size, bsize)
            end
            pre[count] = size
        end
        if tag <= 3 then
            local per = mul(blen, t.child.size)
            t.pre = function(b) return b * per end
            t.blockof = function(q) return per > 0 and q // per or 0 end
            if tag == 2 then
                local bhi = add(mul(blen - 1, t.child.extent), t.child.tub)
                t.nbefore = function(x)
                    -- blocks whose data ends at or before x
                    if stride <= 0 then
                        return (x >= add(disp0, bhi)) and count or 0
                    end
                    local k = (x - disp0 - bhi) // stride + 1
                    return k < 0 and 0 or (k > count and count or k)
                end
            end
        else
            t.pre = function(b) return pre[b] end
            t.blockof = function(q)
                -- the last block b with pre[b] <= q < pre[b + 1]
                local lo, hi = 0, count - 1
                while lo < hi do
                    local mid = (lo + hi + 1) // 2
                    if pre[mid] <= q then lo = mid else hi = mid - 1 end
                end
                return lo
            end
        end
        if not t.nbefore then
            t.nbefore = function(x)
                -- blocks whose data ends at or before x (fin is non-decreasing)
                local lo, hi = 0, count
                while lo < hi do
                    local mid = (lo + hi) // 2
                    if fin[mid] <= x then lo = mid + 1 else hi = mid end
                end
                return lo
            end
        end
        t.size, t.tlb, t.tub, t.mono, t.depth = size, tlb or 0, tub or 0, mono, depth
        if depth > MAX_TREE then
            fail(EINVAL, "type: nested too deeply")
        end
        done[#done + 1] = t
        return t
    end

    local root = node(1)
    if pos ~= p1 then
        fail(EINVAL, "type: trailing bytes after the root node")
    end
    return root
end

-- ------------------------------------------------------------------ seek and walk

-- relative offset of data byte q (0 <= q < size) of one instance of t
local function at(t, q)
    local off = 0
    while t.kind ~= 0 do
        local b = t.blockof(q)
        local c = t.childof(b)
        local r = q - t.pre(b)
        local j = r // c.size
        off = off + t.displ(b) + j * c.extent
        q, t = r - j * c.size, c
    end
    return off + q
end

-- data bytes of one instance of t at relative offsets below x
local function before(t, x)
    if t.size == 0 or x <= t.tlb then
        return 0
    elseif x >= t.tub then
        return t.size
    elseif t.kind == 0 then
        return x
    end
    local nb = t.nbefore(x)
    if nb >= t.n then
        return t.size
    end
    local c, bl = t.childof(nb), t.blen(nb)
    local xr = x - t.displ(nb)
    local k
    if bl == 1 or c.extent <= 0 then
        k = xr >= c.tub and 1 or 0
    else
        k = (xr - c.tub) // c.extent + 1
        k = k < 0 and 0 or (k > bl and bl or k)
    end
    local n = t.pre(nb) + k * c.size
    if k < bl then
        n = n + before(c, xr - k * c.extent)
    end
    return n
end

-- Emit the regions of data bytes [q0, q1) of one instance of t whose origin is at base.
local function walk(t, base, q0, q1, emit)
    if t.kind == 0 then
        emit(base + q0, q1 - q0)
        return
    end
    local b = t.blockof(q0)
    while q0 < q1 do
        local c, bs = t.childof(b), t.pre(b)
        local cs = c.size
        local r0, r1 = q0 - bs, q1 - bs
        local bsize = t.blen(b) * cs
        if r1 > bsize then
            r1 = bsize
        end
        local d = base + t.displ(b)
        if c.kind == 0 then
            -- predefined elements lie back to back: the block is one run
            emit(d + r0, r1 - r0)
        elseif cs > 0 then
            local j = r0 // cs
            while r0 < r1 do
                local e = r1 - j * cs
                if e > cs then
                    e = cs
                end
                walk(c, d + j * c.extent, r0 - j * cs, e, emit)
                r0 = j * cs + e
                j = j + 1
            end
        end
        q0 = bs + r1
        b = b + 1
    end
end

-- ------------------------------------------------------------------ the request

local function parse(s)
    if #s < 72 or sub(s, 1, 4) ~= "TDIO" then
        fail(EINVAL, "request: bad header")
    end
    local r = {}
    local ver, op, res, pos = unpack("<BBI2", s, 5)
    if ver ~= 1 or res ~= 0 or op < 1 or op > 3 then
        fail(EINVAL, "request: unknown version or operation")
    end
    r.op = op
    r.disp, r.start, r.bytes, r.unit, r.factor, r.objsize, r.objno, r.tlen, pos =
        unpack("<i8i8i8i8i8i8i8i8", s, pos)
    if r.tlen < 9 or r.tlen > #s - pos + 1 then
        fail(EINVAL, "request: type length out of range")
    end
    r.type = decode(s, pos, pos + r.tlen)
    r.payload = pos + r.tlen
    return r
end

local function dtio(input, output)
    local s = input:str()
    local r = parse(s)
    local t = r.type
    if r.op == 3 then
        output:append(string.format("%d %d %d %d %d %d %d", t.size, t.lb, t.extent, t.tlb,
            t.tub, t.mono and 1 or 0, t.depth))
        return 0
    end
    local disp, start, bytes = r.disp, r.start, r.bytes
    local su, sc, os, objno = r.unit, r.factor, r.objsize, r.objno
    if disp < 0 or start < 0 or bytes < 0 or su < 1 or sc < 1 or os < su or os % su ~= 0 or
        objno < 0 then
        fail(EINVAL, "request: bad range or geometry")
    end
    chk(add(start, bytes))
    chk(mul(os, sc))
    local rows = os // su
    if rows > MAX_ROWS then
        fail(E2BIG, "request: too many stripe units per object")
    end
    if bytes > MAX_BYTES then
        fail(E2BIG, "request: too many bytes")
    end
    if bytes > 0 and t.size == 0 then
        fail(EINVAL, "request: bytes of an empty filetype")
    end
    if bytes == 0 then
        return 0
    end
    local E, ts = t.extent, t.size
    if not t.mono or E < t.tub - t.tlb or disp + t.tlb < 0 then
        fail(EDOM, "request: the filetype does not tile the file in increasing order")
    end
    -- file offset of stream byte p, and stream bytes at file offsets below x
    local function fileoff(p)
        local k = p // ts
        return add(add(disp, mul(k, E)), at(t, p - k * ts))
    end
    local function sbefore(x)
        local rel = x - disp
        if rel <= t.tlb then
            return 0
        end
        local k = (rel - t.tub) // E + 1
        if k < 0 then
            k = 0
        end
        return k * ts + before(t, rel - k * E)
    end
    local lo, hi = fileoff(start), fileoff(start + bytes - 1) + 1
    local setno, spos = objno // sc, objno % sc
    local W = su * sc
    local base0 = add(mul(setno, mul(os, sc)), spos * su)
    local rlo = (lo - su - base0) // W + 1
    local rhi = (hi - 1 - base0) // W
    if rlo < 0 then rlo = 0 end
    if rhi > rows - 1 then rhi = rows - 1 end

    -- the regions of this object, as object offsets, in stream order (= object order)
    local offs, lens, nreg, total = {}, {}, 0, 0
    local shift = 0
    local function emit(off, len)
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
    for row = rlo, rhi do
        local a = base0 + row * W
        local p0, p1 = sbefore(a), sbefore(a + su)
        if p0 < start then p0 = start end
        if p1 > start + bytes then p1 = start + bytes end
        shift = row * su - a
        while p0 < p1 do
            local k = p0 // ts
            local q1 = p1 - k * ts
            if q1 > ts then q1 = ts end
            walk(t, disp + k * E, p0 - k * ts, q1, emit)
            p0 = k * ts + q1
        end
    end
    if nreg == 0 then
        if r.op == 2 and r.payload <= #s then
            fail(EINVAL, "request: data for an object the access does not touch")
        end
        return 0
    end

    local ok, osize = pcall(objclass.stat)
    if not ok then
        if osize == -objclass.ENOENT then
            osize = 0
        else
            fail(objclass.EIO, "stat failed")
        end
    end
    -- read [o, o + n) of the object, zeros past its end
    local function readrange(o, n)
        local have = osize - o
        if have <= 0 then
            return string.rep("\0", n)
        end
        local got = objclass.read(o, have < n and have or n):str()
        if #got < n then
            got = got .. string.rep("\0", n - #got)
        end
        return got
    end

    local gap = r.op == 1 and GAP_READ or GAP_WRITE
    local parts, np = {}, 0
    local pay = r.payload
    if r.op == 2 and #s - pay + 1 ~= total then
        fail(EINVAL, "request: the data does not match the access")
    end
    local i = 1
    while i <= nreg do
        -- a cluster: regions i..j with small gaps, bounded in size
        local c0, j = offs[i], i
        local held = lens[i]
        while j < nreg and offs[j + 1] - (offs[j] + lens[j]) <= gap and
            offs[j + 1] + lens[j + 1] - c0 <= MAX_CLUSTER do
            j = j + 1
            held = held + lens[j]
        end
        local c1 = offs[j] + lens[j]
        if r.op == 1 then
            local cover = readrange(c0, c1 - c0)
            for k = i, j do
                np = np + 1
                parts[np] = sub(cover, offs[k] - c0 + 1, offs[k] - c0 + lens[k])
            end
        else
            local new
            if held == c1 - c0 then
                new = sub(s, pay, pay + held - 1)
                pay = pay + held
            else
                local cover = readrange(c0, c1 - c0)
                local seg, ns, at0 = {}, 0, c0
                for k = i, j do
                    ns = ns + 1
                    seg[ns] = sub(cover, at0 - c0 + 1, offs[k] - c0)
                    ns = ns + 1
                    seg[ns] = sub(s, pay, pay + lens[k] - 1)
                    pay = pay + lens[k]
                    at0 = offs[k] + lens[k]
                end
                new = concat(seg)
            end
            local bl = bufferlist.new()
            bl:append(new)
            objclass.write(c0, #new, bl)
        end
        i = j + 1
    end
    if r.op == 1 then
        output:append(concat(parts))
    end
    return 0
end

-- run dtio, turning a rejection into its errno (and a line in the OSD log)
local function handler(input, output)
    local ok, res = pcall(dtio, input, output)
    if ok then
        return res
    end
    if type(res) == "table" then
        objclass.log(0, "tessera dtio: " .. res.why)
        return -res.code
    elseif type(res) == "number" then
        -- an objclass call failed with this (negative) errno
        return res
    end
    error(res)
end

objclass.register(handler)
dtio_handler = handler
