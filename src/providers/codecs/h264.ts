import { BitWriter } from './bit-writer.js';

/** A picture in 8-bit YUV 4:2:0: `y` is width × height, `u` and `v` are (width/2) × (height/2). */
export interface YuvFrame {
  y: Uint8Array;
  u: Uint8Array;
  v: Uint8Array;
}

/**
 * A deliberately tiny H.264 encoder for the local video model: Constrained Baseline, CAVLC,
 * every coded macroblock an I_PCM one (raw samples, no transform, no prediction), so there is
 * no rate-distortion logic to get wrong. IDR pictures code every macroblock; P pictures code only
 * the macroblocks that changed since the previous picture and skip the rest (P_Skip with a zero
 * motion vector: every inter macroblock is a skip, so the predicted vector is always zero and a
 * skip copies the co-located block). Deblocking is disabled in each slice. Any H.264 decoder —
 * browsers, ffmpeg — plays the result; it is large per pixel, so the local model keeps pictures
 * small.
 *
 * Widths and heights are even; the coded size is rounded up to whole macroblocks and the SPS
 * crops the rest.
 */
export class PcmH264Encoder {
  readonly mbWidth: number;
  readonly mbHeight: number;
  private frameNum = 0;
  private idrId = 0;

  /** `log2_max_frame_num` of the SPS: frame_num counts modulo 16. */
  private static readonly FRAME_NUM_BITS = 4;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    if (width % 2 || height % 2 || width < 16 || height < 16) throw new RangeError(`PcmH264Encoder: bad size ${width}x${height}`);
    this.mbWidth = Math.ceil(width / 16);
    this.mbHeight = Math.ceil(height / 16);
  }

  /** Coded (macroblock-aligned) size: the frames passed to `encode` have this size. */
  get codedWidth(): number {
    return this.mbWidth * 16;
  }

  get codedHeight(): number {
    return this.mbHeight * 16;
  }

  /** profile_idc, constraint flags, level_idc: what `avcC` and codec strings repeat. */
  static readonly PROFILE = 66;
  static readonly CONSTRAINTS = 0xc0;
  static readonly LEVEL = 30;

  /** The sequence parameter set NAL unit (header byte included, emulation prevention applied). */
  sps(): Uint8Array {
    const w = new BitWriter();
    w.bits(PcmH264Encoder.PROFILE, 8);
    w.bits(PcmH264Encoder.CONSTRAINTS, 8);
    w.bits(PcmH264Encoder.LEVEL, 8);
    w.ue(0); // seq_parameter_set_id
    w.ue(PcmH264Encoder.FRAME_NUM_BITS - 4); // log2_max_frame_num_minus4
    w.ue(2); // pic_order_cnt_type 2: output order = decoding order
    w.ue(1); // max_num_ref_frames
    w.flag(0); // gaps_in_frame_num_value_allowed_flag
    w.ue(this.mbWidth - 1);
    w.ue(this.mbHeight - 1);
    w.flag(1); // frame_mbs_only_flag
    w.flag(1); // direct_8x8_inference_flag
    const cropRight = (this.codedWidth - this.width) / 2;
    const cropBottom = (this.codedHeight - this.height) / 2;
    if (cropRight || cropBottom) {
      w.flag(1); // frame_cropping_flag; offsets in chroma units (2 luma samples)
      w.ue(0);
      w.ue(cropRight);
      w.ue(0);
      w.ue(cropBottom);
    } else {
      w.flag(0);
    }
    w.flag(0); // vui_parameters_present_flag
    w.trailing();
    return nalUnit(3, 7, w.finish());
  }

  /** The picture parameter set NAL unit. */
  pps(): Uint8Array {
    const w = new BitWriter();
    w.ue(0); // pic_parameter_set_id
    w.ue(0); // seq_parameter_set_id
    w.flag(0); // entropy_coding_mode_flag: CAVLC
    w.flag(0); // bottom_field_pic_order_in_frame_present_flag
    w.ue(0); // num_slice_groups_minus1
    w.ue(0); // num_ref_idx_l0_default_active_minus1
    w.ue(0); // num_ref_idx_l1_default_active_minus1
    w.flag(0); // weighted_pred_flag
    w.bits(0, 2); // weighted_bipred_idc
    w.se(0); // pic_init_qp_minus26
    w.se(0); // pic_init_qs_minus26
    w.se(0); // chroma_qp_index_offset
    w.flag(1); // deblocking_filter_control_present_flag (each slice turns it off)
    w.flag(0); // constrained_intra_pred_flag
    w.flag(0); // redundant_pic_cnt_present_flag
    w.trailing();
    return nalUnit(3, 8, w.finish());
  }

  /**
   * One picture as one slice NAL unit. An IDR picture when `previous` is absent (it must be for
   * the first picture), else a P picture coding only the macroblocks that differ from `previous`.
   */
  encode(frame: YuvFrame, previous?: YuvFrame): { nal: Uint8Array; keyframe: boolean } {
    const idr = previous === undefined;
    if (idr) this.frameNum = 0;
    const w = new BitWriter();
    w.ue(0); // first_mb_in_slice
    w.ue(idr ? 7 : 5); // slice_type: I or P, all slices of the picture alike
    w.ue(0); // pic_parameter_set_id
    w.bits(this.frameNum, PcmH264Encoder.FRAME_NUM_BITS);
    if (idr) {
      w.ue(this.idrId); // idr_pic_id: two IDR pictures in a row must differ
      this.idrId = (this.idrId + 1) % 2;
    } else {
      w.flag(0); // num_ref_idx_active_override_flag
      w.flag(0); // ref_pic_list_modification_flag_l0
    }
    // dec_ref_pic_marking (every picture is a reference picture)
    if (idr) {
      w.flag(0); // no_output_of_prior_pics_flag
      w.flag(0); // long_term_reference_flag
    } else {
      w.flag(0); // adaptive_ref_pic_marking_mode_flag: sliding window
    }
    w.se(0); // slice_qp_delta
    w.ue(1); // disable_deblocking_filter_idc: off

    let skipped = 0;
    for (let mby = 0; mby < this.mbHeight; mby++) {
      for (let mbx = 0; mbx < this.mbWidth; mbx++) {
        if (previous && sameMacroblock(frame, previous, mbx, mby, this.codedWidth)) {
          skipped++;
          continue;
        }
        if (!idr) {
          w.ue(skipped); // mb_skip_run
          skipped = 0;
        }
        w.ue(idr ? 25 : 30); // mb_type I_PCM (25 in I slices, 5 + 25 in P slices)
        w.alignZero(); // pcm_alignment_zero_bit
        w.bytes(pcmSamples(frame, mbx, mby, this.codedWidth));
      }
    }
    if (skipped > 0) w.ue(skipped);
    w.trailing();

    this.frameNum = (this.frameNum + 1) % (1 << PcmH264Encoder.FRAME_NUM_BITS);
    return { nal: nalUnit(idr ? 3 : 2, idr ? 5 : 1, w.finish()), keyframe: idr };
  }
}

/** 256 luma then 64 Cb and 64 Cr samples of one macroblock, each in raster order. */
function pcmSamples(frame: YuvFrame, mbx: number, mby: number, width: number): Uint8Array {
  const out = new Uint8Array(384);
  let o = 0;
  for (let row = 0; row < 16; row++) {
    const start = (mby * 16 + row) * width + mbx * 16;
    out.set(frame.y.subarray(start, start + 16), o);
    o += 16;
  }
  const chromaWidth = width / 2;
  for (const plane of [frame.u, frame.v]) {
    for (let row = 0; row < 8; row++) {
      const start = (mby * 8 + row) * chromaWidth + mbx * 8;
      out.set(plane.subarray(start, start + 8), o);
      o += 8;
    }
  }
  return out;
}

function sameMacroblock(a: YuvFrame, b: YuvFrame, mbx: number, mby: number, width: number): boolean {
  for (let row = 0; row < 16; row++) {
    const start = (mby * 16 + row) * width + mbx * 16;
    for (let i = start; i < start + 16; i++) if (a.y[i] !== b.y[i]) return false;
  }
  const chromaWidth = width / 2;
  for (let row = 0; row < 8; row++) {
    const start = (mby * 8 + row) * chromaWidth + mbx * 8;
    for (let i = start; i < start + 8; i++) if (a.u[i] !== b.u[i] || a.v[i] !== b.v[i]) return false;
  }
  return true;
}

/** NAL header byte + payload with emulation prevention (00 00 0x → 00 00 03 0x for x ≤ 3). */
function nalUnit(refIdc: number, type: number, rbsp: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + rbsp.length + Math.ceil(rbsp.length / 2) + 1);
  out[0] = (refIdc << 5) | type;
  let o = 1;
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out[o++] = 3;
      zeros = 0;
    }
    out[o++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, o);
}
