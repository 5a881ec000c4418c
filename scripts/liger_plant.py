"""Plant defects of our own in copies of a Liger-Kernel source tree (issue #20's proof on the GPU box).

    python3 scripts/liger_plant.py SRC OUT      # SRC: an exported tree's src/ (liger_kernel inside)

Writes OUT/<defect>/src for each defect below: a copy of SRC with one line changed, each in a
different place of Liger's FLCE (the CE kernel's gradient, its weighted reduction, the label
smoothing term, the FLCE chunk loop's bias accumulation, the loss reduction). Each anchor must
occur exactly once in its file, so a tree where the line moved fails loudly instead of planting
nothing. The cause a campaign should name for each is in EXPECTED (printed as OUT/expected.json).
Nothing here is committed Liger code: the anchors are single lines matched in the user's tree.
"""
import json
import os
import shutil
import sys

CE = "liger_kernel/ops/cross_entropy.py"
FLCE = "liger_kernel/ops/fused_linear_cross_entropy.py"

# name: (file, anchor line, replacement, the cause a campaign should report)
DEFECTS = {
    "zloss-grad": (CE, "                X_block += 2 * lse_square_scale * lse * X_block",
                   "                X_block += 3 * lse_square_scale * lse * X_block",
                   "z-loss gradient of the non-target columns 1.5x too large (no class weights)",
                   ["lse_square_scale"]),
    "weighted-mean": (CE, "                    dloss_ori = dloss_ori / sum_non_ignore_weight",
                      "                    dloss_ori = dloss_ori / (0.8 * sum_non_ignore_weight)",
                      "class-weighted mean: the gradient divided by 0.8x the weight sum",
                      ["ce_weight"]),
    "smoothing-eps": (CE, "    eps = label_smoothing / n_cols",
                      "    eps = 1.5 * label_smoothing / n_cols",
                      "label smoothing's eps 1.5x too large (loss and gradients)",
                      ["label_smoothing"]),
    "bias-accum": (FLCE, "                alpha=1.0,",
                   "                alpha=1.5,",
                   "grad_bias accumulated 1.5x per chunk",
                   ["bias"]),
    "sum-loss": (FLCE, "        loss = torch.sum(loss_1d)",
                 "        loss = torch.sum(loss_1d) * (1.01 if reduction == \"sum\" else 1.0)",
                 "the loss of reduction=sum 1% too large (the loss alone: no gradient changes)",
                 ["reduction=sum"]),
}


def plant(src, out):
    expected = {}
    for name, (rel, anchor, repl, what, cause) in DEFECTS.items():
        dst = os.path.join(out, name, "src")
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst)
        path = os.path.join(dst, rel)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        hits = [i for i, line in enumerate(lines) if line == anchor]
        if len(hits) != 1:
            raise SystemExit(f"{name}: the anchor occurs {len(hits)} times in {rel} (want 1): {anchor.strip()}")
        lines[hits[0]] = repl
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        expected[name] = {"file": rel, "line": hits[0] + 1, "what": what, "essential": cause}
        print(f"{name}: {rel}:{hits[0] + 1}: {what}")
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)
    return expected


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    plant(sys.argv[1], sys.argv[2])
