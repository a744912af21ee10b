// SPDX-License-Identifier: GPL-2.0
/*
 * The inbox mlx5_ib driver's DCQCN parameters (drivers/infiniband/hw/mlx5/
 * cong.c): with mofed_sysfs=0 the port has no MOFED ecn/ tree and instead
 * <debugfs>/mlx5/<pci>/cc_params/<name>, mode 0600, "%u\n", one file per
 * parameter of mlx5_ib_dbg_cc_name[].  The files show the same values as
 * the MOFED ones would (rp_param/np_param), each read and write a modelled
 * firmware command (QUERY_CONG_PARAMS / MODIFY_CONG_PARAMS).  As in
 * mlx5_ib_set_cc_param_mask_val(), writing np_cnp_prio also sets
 * np_cnp_prio_mode to 0.  rtt_resp_dscp{,_valid} (roce_cc_general) is not
 * modelled.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/uaccess.h>

#include "simnic.h"

bool simnic_mofed_sysfs = true;
module_param_named(mofed_sysfs, simnic_mofed_sysfs, bool, 0444);
MODULE_PARM_DESC(mofed_sysfs,
		 "MOFED ecn/ sysfs (1) or the inbox driver's debugfs cc_params (0)");

/* Where a parameter lives: rp_param[idx], np_param[idx] or cnp_prio_mode. */
enum cc_where { CC_RP, CC_NP, CC_PRIO_MODE };

static const struct {
	const char *name;
	u8 where;
	u8 idx; /* index into rp_param/np_param (sysfs.c's name order) */
	u32 max;
} cc_params[] = {
	{ "rp_clamp_tgt_rate", CC_RP, 0, 1 },
	{ "rp_clamp_tgt_rate_ati", CC_RP, 1, 1 },
	{ "rp_time_reset", CC_RP, 2, U32_MAX },
	{ "rp_byte_reset", CC_RP, 3, U32_MAX },
	{ "rp_threshold", CC_RP, 4, U32_MAX },
	{ "rp_ai_rate", CC_RP, 6, U32_MAX },
	{ "rp_max_rate", CC_RP, 5, U32_MAX },
	{ "rp_hai_rate", CC_RP, 7, U32_MAX },
	{ "rp_min_dec_fac", CC_RP, 9, U32_MAX },
	{ "rp_min_rate", CC_RP, 10, U32_MAX },
	{ "rp_rate_to_set_on_first_cnp", CC_RP, 11, U32_MAX },
	{ "rp_dce_tcp_g", CC_RP, 12, U32_MAX },
	{ "rp_dce_tcp_rtt", CC_RP, 13, U32_MAX },
	{ "rp_rate_reduce_monitor_period", CC_RP, 14, U32_MAX },
	{ "rp_initial_alpha_value", CC_RP, 15, U32_MAX },
	{ "rp_gd", CC_RP, 8, U32_MAX },
	{ "np_min_time_between_cnps", CC_NP, 0, U32_MAX },
	{ "np_cnp_dscp", CC_NP, 1, 63 },
	{ "np_cnp_prio_mode", CC_PRIO_MODE, 0, 1 },
	{ "np_cnp_prio", CC_NP, 2, 7 },
};

struct cc_file {
	struct simnic_port *port;
	u8 param;
};

static struct cc_file cc_files[SIMNIC_MAX_PORTS][ARRAY_SIZE(cc_params)];
static struct dentry *cc_root; /* <debugfs>/mlx5 */

static u32 *cc_value(struct cc_file *f)
{
	struct simnic_port *port = f->port;

	switch (cc_params[f->param].where) {
	case CC_RP:
		return &port->rp_param[cc_params[f->param].idx];
	case CC_NP:
		return &port->np_param[cc_params[f->param].idx];
	default:
		return &port->cnp_prio_mode;
	}
}

static ssize_t cc_read(struct file *file, char __user *buf, size_t count,
		       loff_t *pos)
{
	struct cc_file *f = file->private_data;
	char text[12];
	u32 v;
	int len;

	simnic_fw_delay(f->port, SIMNIC_FW_QOS);
	spin_lock_bh(&f->port->lock);
	v = *cc_value(f);
	spin_unlock_bh(&f->port->lock);
	len = scnprintf(text, sizeof(text), "%u\n", v);
	return simple_read_from_buffer(buf, count, pos, text, len);
}

static ssize_t cc_write(struct file *file, const char __user *buf,
			size_t count, loff_t *pos)
{
	struct cc_file *f = file->private_data;
	u32 v;
	int err;

	err = kstrtou32_from_user(buf, count, 0, &v);
	if (err)
		return err;
	if (v > cc_params[f->param].max)
		return -EINVAL; /* firmware's bad-parameter status */
	simnic_fw_delay(f->port, SIMNIC_FW_QOS);
	spin_lock_bh(&f->port->lock);
	*cc_value(f) = v;
	if (!strcmp(cc_params[f->param].name, "np_cnp_prio"))
		f->port->cnp_prio_mode = 0;
	spin_unlock_bh(&f->port->lock);
	return count;
}

static const struct file_operations cc_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = cc_read,
	.write = cc_write,
	.llseek = default_llseek,
};

static void cc_port_add(struct simnic_port *port)
{
	struct dentry *dev_dir, *dir;
	int i;

	/* mlx5_debugfs_get_dev_root(): the function's pci_name() under mlx5/ */
	dev_dir = debugfs_create_dir(dev_name(port->parent), cc_root);
	dir = debugfs_create_dir("cc_params", dev_dir);
	for (i = 0; i < ARRAY_SIZE(cc_params); i++) {
		struct cc_file *f = &cc_files[port->index][i];

		f->port = port;
		f->param = i;
		debugfs_create_file(cc_params[i].name, 0600, dir, f, &cc_fops);
	}
}

void simnic_cc_params_init(void)
{
	int i;

	if (simnic_mofed_sysfs)
		return;
	cc_root = debugfs_create_dir("mlx5", NULL);
	for (i = 0; i < simnic_num_ports; i++)
		cc_port_add(simnic_ports[i]);
}

void simnic_cc_params_exit(void)
{
	debugfs_remove_recursive(cc_root);
	cc_root = NULL;
}
