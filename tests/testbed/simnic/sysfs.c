// SPDX-License-Identifier: GPL-2.0
/*
 * MOFED 25.10 netdev sysfs (en_sysfs.c / en_ecn.c layout):
 *   ecn/roce_{rp,np}/enable/<0..7>, ecn/roce_rp/<DCQCN params>,
 *   ecn/roce_np/{min_time_between_cnps,cnp_dscp,cnp_802p_prio},
 *   qos/{tc_num,maxrate,prio2buffer,buffer_size}, settings/pfc_stall_prevention,
 *   phy_stats/{rx,tx}_{packets,bytes}.
 * There is deliberately no qos/trust or qos/dscp2prio: MOFED 25.10 dropped
 * them and derives trust from the DCB APP table.
 */
#include <linux/rtnetlink.h>
#include <linux/sysfs.h>

#include "simnic.h"

static const char *const rp_names[SIMNIC_RP_PARAMS] = {
	"clamp_tgt_rate", "clamp_tgt_rate_after_time_inc", "rpg_time_reset",
	"rpg_byte_reset", "rpg_threshold", "rpg_max_rate", "rpg_ai_rate",
	"rpg_hai_rate", "rpg_gd", "rpg_min_dec_fac", "rpg_min_rate",
	"rate2set_fcnp", "dce_tcp_g", "dce_tcp_rtt", "rreduce_mperiod",
	"initial_alpha_value",
};

static const char *const np_names[SIMNIC_NP_PARAMS] = {
	"min_time_between_cnps", "cnp_dscp", "cnp_802p_prio",
};

/* Largest accepted value per parameter (U32_MAX = no bound). */
static u32 param_max(int role, int idx)
{
	if (role == SIMNIC_ECN_RP)
		return idx <= 1 ? 1 : U32_MAX; /* clamp_* are booleans */
	if (idx == 1)
		return 63; /* cnp_dscp */
	if (idx == 2)
		return 7; /* cnp_802p_prio */
	return U32_MAX;
}

static ssize_t ecn_enable_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct simnic_ecn_en_attr *a =
		container_of(attr, struct simnic_ecn_en_attr, attr);
	struct simnic_port *port = a->port;
	int en;

	spin_lock_bh(&port->lock);
	en = !!(port->ecn_en[a->role] & BIT(a->prio));
	spin_unlock_bh(&port->lock);
	return sysfs_emit(buf, "%d\n", en);
}

static ssize_t ecn_enable_store(struct kobject *kobj,
				struct kobj_attribute *attr, const char *buf,
				size_t count)
{
	struct simnic_ecn_en_attr *a =
		container_of(attr, struct simnic_ecn_en_attr, attr);
	struct simnic_port *port = a->port;
	int val;

	if (simnic_write_latency(true))
		return -EINTR;
	if (kstrtoint(buf, 0, &val) || (val != 0 && val != 1))
		return -EINVAL;
	spin_lock_bh(&port->lock);
	if (val)
		port->ecn_en[a->role] |= BIT(a->prio);
	else
		port->ecn_en[a->role] &= ~BIT(a->prio);
	spin_unlock_bh(&port->lock);
	return count;
}

static u32 *param_ptr(struct simnic_ecn_param_attr *a)
{
	return a->role == SIMNIC_ECN_RP ? &a->port->rp_param[a->idx] :
					  &a->port->np_param[a->idx];
}

static ssize_t ecn_param_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	struct simnic_ecn_param_attr *a =
		container_of(attr, struct simnic_ecn_param_attr, attr);
	u32 v;

	spin_lock_bh(&a->port->lock);
	v = *param_ptr(a);
	spin_unlock_bh(&a->port->lock);
	return sysfs_emit(buf, "%u\n", v);
}

static ssize_t ecn_param_store(struct kobject *kobj,
			       struct kobj_attribute *attr, const char *buf,
			       size_t count)
{
	struct simnic_ecn_param_attr *a =
		container_of(attr, struct simnic_ecn_param_attr, attr);
	u32 v;

	if (kstrtou32(buf, 0, &v) || v > param_max(a->role, a->idx))
		return -EINVAL;
	spin_lock_bh(&a->port->lock);
	*param_ptr(a) = v;
	spin_unlock_bh(&a->port->lock);
	return count;
}

static void init_kattr(struct kobj_attribute *ka, const char *name,
		       ssize_t (*show)(struct kobject *, struct kobj_attribute *,
				       char *),
		       ssize_t (*store)(struct kobject *,
					struct kobj_attribute *, const char *,
					size_t))
{
	sysfs_attr_init(&ka->attr);
	ka->attr.name = name;
	ka->attr.mode = 0644; /* set_kobj_mode() of a PF */
	ka->show = show;
	ka->store = store;
}

static int ecn_create(struct simnic_port *port)
{
	static const char *const role_names[SIMNIC_ECN_ROLES] = {
		[SIMNIC_ECN_RP] = "roce_rp",
		[SIMNIC_ECN_NP] = "roce_np",
	};
	int r, i, err;

	port->ecn_kobj = kobject_create_and_add("ecn", &port->netdev->dev.kobj);
	if (!port->ecn_kobj)
		return -ENOMEM;
	for (r = 0; r < SIMNIC_ECN_ROLES; r++) {
		port->role_kobj[r] =
			kobject_create_and_add(role_names[r], port->ecn_kobj);
		if (!port->role_kobj[r])
			return -ENOMEM;
		port->en_kobj[r] =
			kobject_create_and_add("enable", port->role_kobj[r]);
		if (!port->en_kobj[r])
			return -ENOMEM;
		for (i = 0; i < SIMNIC_NUM_PRIO; i++) {
			struct simnic_ecn_en_attr *a = &port->en_attr[r][i];

			a->port = port;
			a->role = r;
			a->prio = i;
			a->name[0] = '0' + i;
			init_kattr(&a->attr, a->name, ecn_enable_show,
				   ecn_enable_store);
			err = sysfs_create_file(port->en_kobj[r], &a->attr.attr);
			if (err)
				return err;
		}
	}
	for (i = 0; i < SIMNIC_RP_PARAMS; i++) {
		struct simnic_ecn_param_attr *a = &port->rp_attr[i];

		a->port = port;
		a->role = SIMNIC_ECN_RP;
		a->idx = i;
		init_kattr(&a->attr, rp_names[i], ecn_param_show,
			   ecn_param_store);
		err = sysfs_create_file(port->role_kobj[SIMNIC_ECN_RP],
					&a->attr.attr);
		if (err)
			return err;
	}
	for (i = 0; i < SIMNIC_NP_PARAMS; i++) {
		struct simnic_ecn_param_attr *a = &port->np_attr[i];

		a->port = port;
		a->role = SIMNIC_ECN_NP;
		a->idx = i;
		init_kattr(&a->attr, np_names[i], ecn_param_show,
			   ecn_param_store);
		err = sysfs_create_file(port->role_kobj[SIMNIC_ECN_NP],
					&a->attr.attr);
		if (err)
			return err;
	}
	return 0;
}

/* kobject_put() removes the directory and its files; kernfs waits for
 * readers and writers still inside show/store before returning.
 */
static void ecn_remove(struct simnic_port *port)
{
	int r;

	for (r = 0; r < SIMNIC_ECN_ROLES; r++) {
		kobject_put(port->en_kobj[r]);
		port->en_kobj[r] = NULL;
		kobject_put(port->role_kobj[r]);
		port->role_kobj[r] = NULL;
	}
	kobject_put(port->ecn_kobj);
	port->ecn_kobj = NULL;
}

static struct simnic_port *dev_port(struct device *d)
{
	return netdev_priv(to_net_dev(d));
}

/* ---- qos/ ---- */

static ssize_t tc_num_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", netdev_get_num_tc(to_net_dev(d)));
}
static DEVICE_ATTR_RO(tc_num);

static ssize_t maxrate_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct simnic_port *port = dev_port(d);
	int len = 0, i;

	for (i = 0; i < SIMNIC_NUM_TC; i++)
		len += sysfs_emit_at(buf, len, "%llu ",
				     simnic_dcb_maxrate_kbps(port, i));
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

static ssize_t maxrate_store(struct device *d, struct device_attribute *attr,
			     const char *buf, size_t count)
{
	struct simnic_port *port = dev_port(d);
	u16 val[SIMNIC_NUM_TC];
	u8 unit[SIMNIC_NUM_TC];
	char tmp[256], *s = tmp, *tok;
	int n = 0, err;
	u64 rate;

	if (count >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, count);
	tmp[count] = '\0';
	while ((tok = strsep(&s, " \n")) != NULL) {
		if (!*tok)
			continue;
		if (n >= SIMNIC_NUM_TC || kstrtou64(tok, 10, &rate))
			return -EINVAL;
		err = simnic_dcb_setmaxrate_one(port, n, rate, &val[n],
						&unit[n]);
		if (err)
			return err;
		n++;
	}
	if (n != SIMNIC_NUM_TC)
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	memcpy(port->maxrate_val, val, sizeof(val));
	memcpy(port->maxrate_unit, unit, sizeof(unit));
	rtnl_unlock();
	return count;
}
static DEVICE_ATTR_RW(maxrate);

/* Parse exactly n comma-separated unsigned values, like mlnx_qos writes. */
static int parse_csv(const char *buf, size_t count, u32 *out, int n)
{
	char tmp[256], *s = tmp, *tok;
	int i = 0;

	if (count >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, count);
	tmp[count] = '\0';
	while ((tok = strsep(&s, ",\n")) != NULL) {
		tok = strim(tok);
		if (!*tok)
			continue;
		if (i >= n || kstrtou32(tok, 10, &out[i]))
			return -EINVAL;
		i++;
	}
	return i == n ? 0 : -EINVAL;
}

static ssize_t prio2buffer_show(struct device *d,
				struct device_attribute *attr, char *buf)
{
	struct simnic_port *port = dev_port(d);
	int len, i;

	len = sysfs_emit(buf, "Priority\tBuffer\n");
	for (i = 0; i < SIMNIC_NUM_PRIO; i++)
		len += sysfs_emit_at(buf, len, "%d\t\t%d\n", i,
				     port->prio2buffer[i]);
	return len;
}

static ssize_t prio2buffer_store(struct device *d,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct simnic_port *port = dev_port(d);
	struct dcbnl_buffer b;
	u32 v[SIMNIC_NUM_PRIO];
	int i, err;

	if (parse_csv(buf, count, v, SIMNIC_NUM_PRIO))
		return -EINVAL;
	for (i = 0; i < SIMNIC_NUM_PRIO; i++)
		if (v[i] >= SIMNIC_NUM_BUFFERS)
			return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	simnic_dcbnl_ops.dcbnl_getbuffer(port->netdev, &b);
	for (i = 0; i < SIMNIC_NUM_PRIO; i++)
		b.prio2buffer[i] = v[i];
	err = simnic_dcbnl_ops.dcbnl_setbuffer(port->netdev, &b);
	rtnl_unlock();
	return err ?: count;
}
static DEVICE_ATTR_RW(prio2buffer);

static ssize_t buffer_size_show(struct device *d,
				struct device_attribute *attr, char *buf)
{
	struct simnic_port *port = dev_port(d);
	u32 used = 0;
	int len, i;

	for (i = 0; i < SIMNIC_NUM_BUFFERS; i++)
		used += port->buffer_size[i];
	len = sysfs_emit(buf, "Port buffer size = %u\n", port->total_size);
	len += sysfs_emit_at(buf, len, "Spare buffer size = %u\n",
			     port->total_size - used);
	len += sysfs_emit_at(buf, len, "Buffer\tSize\txoff_threshold\txon_threshold\n");
	for (i = 0; i < SIMNIC_NUM_BUFFERS; i++)
		len += sysfs_emit_at(buf, len, "%d\t%u\t%d\t\t%d\n", i,
				     port->buffer_size[i], 0, 0);
	return len;
}

static ssize_t buffer_size_store(struct device *d,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct simnic_port *port = dev_port(d);
	struct dcbnl_buffer b;
	u32 v[SIMNIC_NUM_BUFFERS];
	int err;

	if (parse_csv(buf, count, v, SIMNIC_NUM_BUFFERS))
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	simnic_dcbnl_ops.dcbnl_getbuffer(port->netdev, &b);
	memcpy(b.buffer_size, v, sizeof(v));
	err = simnic_dcbnl_ops.dcbnl_setbuffer(port->netdev, &b);
	rtnl_unlock();
	return err ?: count;
}
static DEVICE_ATTR_RW(buffer_size);

static struct attribute *qos_attrs[] = {
	&dev_attr_tc_num.attr,
	&dev_attr_maxrate.attr,
	&dev_attr_prio2buffer.attr,
	&dev_attr_buffer_size.attr,
	NULL,
};

static umode_t qos_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	if ((attr == &dev_attr_prio2buffer.attr ||
	     attr == &dev_attr_buffer_size.attr) && !simnic_cap_buffer)
		return 0;
	return attr->mode;
}

static const struct attribute_group qos_group = {
	.name = "qos",
	.attrs = qos_attrs,
	.is_visible = qos_visible,
};

/* ---- settings/ ---- */

#define STALL_DEFAULT_MS 8000
#define STALL_AUTO_MS 100

static ssize_t pfc_stall_prevention_show(struct device *d,
					 struct device_attribute *attr,
					 char *buf)
{
	if (!simnic_cap_storm)
		return -EOPNOTSUPP;
	return sysfs_emit(buf, "%s\n",
			  dev_port(d)->stall_critical_ms == STALL_DEFAULT_MS ?
				  "default" : "auto");
}

static ssize_t pfc_stall_prevention_store(struct device *d,
					  struct device_attribute *attr,
					  const char *buf, size_t count)
{
	u16 ms;

	if (!simnic_cap_storm)
		return -EOPNOTSUPP;
	if (sysfs_streq(buf, "default"))
		ms = STALL_DEFAULT_MS;
	else if (sysfs_streq(buf, "auto"))
		ms = STALL_AUTO_MS;
	else
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	simnic_set_stall(dev_port(d), ms);
	rtnl_unlock();
	return count;
}
static DEVICE_ATTR_RW(pfc_stall_prevention);

static struct attribute *settings_attrs[] = {
	&dev_attr_pfc_stall_prevention.attr,
	NULL,
};

static const struct attribute_group settings_group = {
	.name = "settings",
	.attrs = settings_attrs,
};

/* ---- phy_stats/ (PPCNT 802.3 group) ---- */

static ssize_t phy_sum_show(struct device *d, char *buf, int kind)
{
	struct simnic_port *port = dev_port(d);
	u64 v;

	spin_lock_bh(&port->lock);
	v = simnic_sum_prio(port, kind, simnic_now());
	spin_unlock_bh(&port->lock);
	return sysfs_emit(buf, "%llu\n", v);
}

#define PHY_STAT(name, kind)                                                  \
	static ssize_t name##_show(struct device *d,                          \
				   struct device_attribute *attr, char *buf)  \
	{                                                                     \
		return phy_sum_show(d, buf, kind);                            \
	}                                                                     \
	static DEVICE_ATTR_RO(name)

PHY_STAT(rx_packets, SP_RX_PACKETS);
PHY_STAT(tx_packets, SP_TX_PACKETS);
PHY_STAT(rx_bytes, SP_RX_BYTES);
PHY_STAT(tx_bytes, SP_TX_BYTES);

static struct attribute *phy_stat_attrs[] = {
	&dev_attr_rx_packets.attr,
	&dev_attr_tx_packets.attr,
	&dev_attr_rx_bytes.attr,
	&dev_attr_tx_bytes.attr,
	NULL,
};

static const struct attribute_group phy_stat_group = {
	.name = "phy_stats",
	.attrs = phy_stat_attrs,
};

static const struct attribute_group *port_groups[] = {
	&qos_group,
	&settings_group,
	&phy_stat_group,
	NULL,
};

int simnic_sysfs_create(struct simnic_port *port)
{
	int err;

	if (simnic_mofed_sysfs) { /* else cc_params.c's debugfs */
		err = ecn_create(port);
		if (err)
			return err;
	}
	err = sysfs_create_groups(&port->netdev->dev.kobj, port_groups);
	if (err)
		return err;
	port->groups_created = true;
	return 0;
}

void simnic_sysfs_remove(struct simnic_port *port)
{
	if (port->groups_created)
		sysfs_remove_groups(&port->netdev->dev.kobj, port_groups);
	port->groups_created = false;
	ecn_remove(port);
}
